import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/kernel/project-root.ts';

// Every path a doc or a comment names exists. A folder move renames files, and a reference it misses
// sends a newcomer looking for a file that is not there; this finds each such reference, by file and line.
//
// Checked: README.md and every other Markdown file (their text, code blocks included) and the comments of
// the code (TypeScript through the compiler's own comment ranges; Python and shell `#` comments).
// - A path that starts at a top-level folder (`shared/bronze/sink.ts`, `docs/protocol.md`, `test/unit/`)
//   must exist from the project root; Markdown links from the linking file (with their `#anchor`, a heading
//   of the target); `./` and `../` from the commenting file.
// - A shorter path with a file extension (`bronze/writer.test.ts`, `claim-files.ts`) must be the end of
//   some file's path: prose abbreviates, but the file it abbreviates must be there.
// Not paths: URLs (`https://`, `s3://`), globs and placeholders (`*`, `{a,b}`, `<table>`, `...`), and any
// line carrying the marker HYPOTHETICAL below, for a path that is an example on purpose.

/** Put on the same line as a path that is an example on purpose (a doc comment, an HTML comment). */
const HYPOTHETICAL = 'hypothetical path';

const TOP = [
  'shared',
  'functions',
  'infra',
  'local',
  'cli',
  'bench',
  'test',
  'docs',
  'emulator',
  'node_modules',
];
/** Extensions a shortened path is checked for (a `.json` without a folder is nearly always an example). */
const CHECKED_EXTENSIONS = /\.(ts|mts|mjs|md|py|sh)$/;
/**
 * Files of other projects that comments and docs cite by the name their own repository gives them (the
 * repository is named beside each). Not ours, so not checked.
 */
const OTHER_PROJECTS = [
  'PROTOCOL.md', // delta-io/delta, the Delta Lake protocol
  'LogicalTypes.md', // apache/parquet-format
  'examples/snippets/idempotency/workingWithBatch.ts', // aws-powertools/powertools-lambda-typescript
  'tests/aws/services/stepfunctions/v2/error_handling/test_task_service_lambda.snapshot.json', // LocalStack
];
/** Folders never scanned nor matched: dependencies, caches and build output (.gitignore's folders). */
const SKIPPED_DIRS = new Set([
  '.git',
  'node_modules',
  '.venv',
  '.cache',
  'cdk.out',
  '.inlet',
  'coverage',
  'dist',
  'scratch',
]);

/** A run of path characters; placeholders and globs are taken in so the whole token can be refused. */
const TOKEN = /(?<![\w.@/$-])(?:\.{1,2}\/)?[\w.<>{}*$-]+(?:\/[\w.<>{}*,$-]*)*/g;
const URL = /\b[a-z][a-z0-9+]*:\/\/\S*/gi;
const NOT_A_PATH = /[<>{}*$]|\.\.\.|…/;

interface Mention {
  readonly path: string;
  readonly line: number;
  /** `link` (resolved from the file), `relative` (`./`, `../`), `rooted` (a top-level folder), `short`. */
  readonly kind: 'link' | 'relative' | 'rooted' | 'short';
  /** A Markdown link's `#fragment`: a heading of the target (GitHub's anchors). */
  readonly anchor?: string;
}

/** The paths `text` names, line by line (1-based lines of `text`). */
function pathsIn(text: string, firstLine = 1): Mention[] {
  const found: Mention[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw.includes(HYPOTHETICAL)) return;
    const line = firstLine + index;
    const links = [...raw.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
    for (const link of links) {
      const [target = '', anchor] = link.split('#');
      const external = URL.test(link);
      URL.lastIndex = 0;
      if (external || NOT_A_PATH.test(target) || (!target && !anchor)) continue;
      found.push({ path: target, line, kind: 'link', ...(anchor ? { anchor } : {}) });
    }
    const prose = raw.replace(/\]\([^)\s]+\)/g, ']').replace(URL, ' ');
    for (const m of prose.matchAll(TOKEN)) {
      if (NOT_A_PATH.test(m[0])) continue;
      const token = m[0].replace(/[.,:;]+$/, '');
      if (token.startsWith('./') || token.startsWith('../'))
        found.push({ path: token, line, kind: 'relative' });
      else if (token.includes('/') && TOP.includes(token.split('/')[0] ?? ''))
        found.push({ path: token, line, kind: 'rooted' });
      else if (CHECKED_EXTENSIONS.test(token)) found.push({ path: token, line, kind: 'short' });
    }
  });
  return found;
}

const { SyntaxKind: K } = ts;
/** After these a `/` divides; anywhere else it starts a regular expression (the usual heuristic). */
const OPERAND_END = new Set([
  K.Identifier,
  K.PrivateIdentifier,
  K.NumericLiteral,
  K.BigIntLiteral,
  K.StringLiteral,
  K.RegularExpressionLiteral,
  K.NoSubstitutionTemplateLiteral,
  K.TemplateTail,
  K.CloseParenToken,
  K.CloseBracketToken,
  K.CloseBraceToken,
  K.ThisKeyword,
  K.SuperKeyword,
  K.TrueKeyword,
  K.FalseKeyword,
  K.NullKeyword,
]);

/**
 * The comments of a TypeScript file, by the compiler's scanner (a parse would cost four times as long and
 * misses comments before a closing brace). Regular expressions and template literals are re-scanned so
 * that a `//` inside them is not taken for a comment.
 */
function tsComments(text: string): { text: string; pos: number }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const comments: { text: string; pos: number }[] = [];
  /** One entry per open brace: true when it is a template literal's `${`. */
  const braces: boolean[] = [];
  let previous = K.Unknown;
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if (kind === K.SingleLineCommentTrivia || kind === K.MultiLineCommentTrivia) {
      comments.push({ text: scanner.getTokenText(), pos: scanner.getTokenStart() });
      continue;
    }
    if (kind === K.WhitespaceTrivia || kind === K.NewLineTrivia) continue;
    if ((kind === K.SlashToken || kind === K.SlashEqualsToken) && !OPERAND_END.has(previous))
      kind = scanner.reScanSlashToken();
    if (kind === K.TemplateHead) braces.push(true);
    else if (kind === K.OpenBraceToken) braces.push(false);
    else if (kind === K.CloseBraceToken && braces.pop()) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === K.TemplateMiddle) braces.push(true);
    }
    previous = kind;
  }
  return comments;
}

/** The comment text of a source file, each piece with the line it starts on. */
function commentsOf(file: string, text: string): { text: string; line: number }[] {
  if (file.endsWith('.md')) return [{ text, line: 1 }];
  const starts = [...text.matchAll(/\n/g)].map((m) => m.index + 1);
  const lineOf = (pos: number) => {
    let line = 1;
    while (line <= starts.length && (starts[line - 1] ?? 0) <= pos) line++;
    return line;
  };
  if (/\.(ts|mts|mjs)$/.test(file))
    return tsComments(text).map((c) => ({ text: c.text, line: lineOf(c.pos) }));
  // Python and shell: whole-line and trailing `#` comments (a `#` inside a string is rare in these files
  // and at worst adds a token to check).
  return text.split('\n').flatMap((line, index) => {
    const at = line.search(/(^|\s)#/);
    return at < 0 ? [] : [{ text: line.slice(at), line: index + 1 }];
  });
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings, repeated ones numbered as GitHub numbers them. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('```')) fence = !fence;
    const heading = !fence && /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function projectFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(projectRoot, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else files.push(path);
    }
  };
  walk('');
  return files;
}

const SCANNED = /\.(md|ts|mts|mjs|py|sh)$/;
const SCRIPTS = ['.ci/run', 'local/lambda/bootstrap'];
/** Files the project writes when it runs (.gitignore's files, such as bench/results.json). */
const generated = readFileSync(join(projectRoot, '.gitignore'), 'utf8')
  .split('\n')
  .filter((line) => line.includes('/') && !line.endsWith('/') && !line.includes('*'));

function missing(files: readonly string[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, string[]>();
  for (const f of files) {
    const name = f.split('/').pop() ?? f;
    byName.set(name, [...(byName.get(name) ?? []), f]);
  }
  for (const file of files.filter((f) => SCANNED.test(f) || SCRIPTS.includes(f))) {
    const text = readFileSync(join(projectRoot, file), 'utf8');
    for (const piece of commentsOf(file, text)) {
      for (const mention of pathsIn(piece.text, piece.line)) {
        const { path, line, kind } = mention;
        const bare = path.replace(/\/$/, '');
        let ok: boolean;
        if (kind === 'link' || kind === 'relative') {
          const resolved = bare ? normalize(join(dirname(file), bare)) : file;
          ok =
            existsSync(join(projectRoot, resolved)) &&
            !relative(projectRoot, join(projectRoot, resolved)).startsWith('..');
          if (ok && mention.anchor && resolved.endsWith('.md'))
            ok = anchorsOf(readFileSync(join(projectRoot, resolved), 'utf8')).has(mention.anchor);
        } else if (kind === 'rooted') ok = existsSync(join(projectRoot, bare)) || generated.includes(bare);
        else
          ok =
            OTHER_PROJECTS.some((other) => bare.endsWith(other)) ||
            (byName.get(bare.split('/').pop() ?? '') ?? []).some((f) => f === bare || f.endsWith(`/${bare}`));
        if (!ok) problems.push(`${file}:${line}: ${path}${mention.anchor ? `#${mention.anchor}` : ''}`);
      }
    }
  }
  return [...new Set(problems)];
}

describe('paths named in docs and comments', () => {
  it('each exist (a stale one is listed with its file and line)', () => {
    expect(missing(projectFiles())).toEqual([]);
  });
});

describe('what counts as a path', () => {
  const paths = (text: string) => pathsIn(text).map((m) => `${m.kind} ${m.path}`);

  it('takes paths from a top-level folder, shortened file names, relative and Markdown links', () => {
    expect(paths('see `shared/bronze/sink.ts`, docs/x.md and test/unit/ (B2).')).toEqual([
      'rooted shared/bronze/sink.ts',
      'rooted docs/x.md',
      'rooted test/unit/',
    ]);
    expect(paths('as in bronze/writer.test.ts and claim-files.ts; ./check.ts')).toEqual([
      'short bronze/writer.test.ts',
      'short claim-files.ts',
      'relative ./check.ts',
    ]);
    expect(paths('[the emulator](emulator.md#apis) and [x](../README.md)')).toEqual([
      'link emulator.md',
      'link ../README.md',
    ]);
  });

  it("checks a link's anchor against the target's headings, as GitHub makes anchors", () => {
    const anchors = anchorsOf(
      '# Inlet\n## Reference engines (`npm run test:engines`)\n```\n# not a heading\n```\n## Checks\n## Checks\n',
    );
    expect([...anchors]).toEqual(['inlet', 'reference-engines-npm-run-testengines', 'checks', 'checks-1']);
    expect(pathsIn('[here](#checks) [there](a.md#b)').map((m) => m.anchor)).toEqual(['checks', 'b']);
  });

  it('leaves URLs, globs, placeholders, examples and marked lines alone', () => {
    expect(
      paths('https://github.com/delta-io/delta/blob/master/PROTOCOL.md and s3://bucket/shared/x.ts'),
    ).toEqual([]);
    expect(paths('[docs](https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html)')).toEqual([]);
    expect(
      paths('shared/*/aws/, shared/{aws,storage}/x.ts, shared/<feature>/x.ts, test/unit/bronze/...'),
    ).toEqual([]);
    expect(paths('`orders/2026/a b+c.json`, 1/2 of it, and/or, `_staging/<table>/<B>.json`')).toEqual([]);
    expect(paths(`test/unit/foo.test.ts <!-- ${HYPOTHETICAL} -->`)).toEqual([]);
  });
});

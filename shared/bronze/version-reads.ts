import { type InletCommit as InletSchema, parseActionLine } from './delta-actions.ts';
import type { DeltaStore } from './ports.ts';

/**
 * What the sink read of a version's landing files, as its Delta commits record it (`commitInfo.inlet`):
 * cleanSource removes only writes the table read as the manifest names them, so it needs the exceptions.
 * Recorded as exceptions, not per file: a commit of 20,000 files would otherwise carry megabytes every
 * reader replaying the log parses.
 */
export interface VersionReads {
  /** Files recorded missing: not read at all, so nothing of them is in the table. */
  readonly missing: ReadonlySet<string>;
  /**
   * Files read at another write than the manifest names (path identity: the key was rewritten since its
   * event, or the manifest's version is gone and the current object was read).
   */
  readonly rewritten: ReadonlySet<string>;
}

/** `s3://bucket/key`, as the commit and the `_source_file` column name a landing file. */
export const sourceUrl = (ref: { readonly bucket: string; readonly key: string }) =>
  `s3://${ref.bucket}/${ref.key}`;

/** What one commit of the sink's says in `commitInfo.inlet`. */
interface InletCommit {
  readonly manifestVersion: number;
  /** The manifest's files it covers, `[from, to)` of `of`; absent: the whole version. */
  readonly sourceFiles?: { readonly from: number; readonly to: number; readonly of: number };
  readonly missing: readonly string[];
  readonly rewritten: readonly string[];
}

const urls = (list: InletSchema['missingSources']) =>
  (list ?? []).flatMap((x) => (typeof x === 'string' ? [x] : x.url ? [x.url] : []));

/**
 * The sink's `commitInfo.inlet` of Delta version `version`, or undefined for another writer's commit. Only
 * the commitInfo line is decoded: a commit of 20,000 files is probed without parsing its `add`s.
 */
function inletOf(version: number, text: string): InletCommit | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.includes('"commitInfo"')) continue;
    for (const action of parseActionLine({ version, line: i + 1 }, line)) {
      if (!('commitInfo' in action)) continue;
      const inlet = action.commitInfo.inlet;
      if (inlet?.manifestVersion === undefined) return undefined;
      return {
        manifestVersion: inlet.manifestVersion,
        ...(inlet.sourceFiles ? { sourceFiles: inlet.sourceFiles } : {}),
        missing: urls(inlet.missingSources),
        rewritten: urls(inlet.rewrittenSources),
      };
    }
  }
  return undefined;
}

/**
 * Finds the sink's commits of manifest versions in a table's log, for cleanSource, which asks for versions
 * in order. A version is one commit, or one per part, and other writers' commits may sit between them, so
 * manifest version v is not at a fixed Delta version: it is at v-1 or later (each earlier manifest version
 * has at least one commit), and the first commit of ours at or after a Delta version has a manifest version
 * that only grows with it. The first lookup of a run bisects that (a GET a probe); later ones start where
 * the previous version's commits ended, which is usually their first commit.
 */
export class VersionCommits {
  /** Where the next version's commits start, at the earliest, once one was found. */
  private next = 0;

  /** `through`: the last Delta version of the sink's that the cursor counts; nothing of interest is later. */
  constructor(
    private readonly delta: Pick<DeltaStore, 'getCommit'>,
    private readonly through: number,
  ) {}

  /**
   * What the sink read of manifest version `manifestVersion`, from all its commits; undefined when the log
   * does not hold them all (no commit of ours for it, a part missing, or a commit another writer's log
   * cleanup removed): then none of its files may be cleaned.
   */
  async readsOf(manifestVersion: number): Promise<VersionReads | undefined> {
    const first = await this.firstOf(manifestVersion);
    if (first === undefined) return undefined;
    const missing = new Set<string>();
    const rewritten = new Set<string>();
    let covered = 0;
    let of: number | undefined;
    for (let d = first; d <= this.through; d++) {
      const text = await this.delta.getCommit(d);
      if (text === undefined) return undefined;
      const inlet = inletOf(d, text);
      if (!inlet) continue;
      if (inlet.manifestVersion !== manifestVersion) break;
      const part = inlet.sourceFiles;
      // Parts follow each other without gap or overlap (each starts where the txn said the table stood).
      if ((part?.from ?? 0) !== covered) return undefined;
      covered = part ? part.to : Number.POSITIVE_INFINITY;
      of = part ? part.of : covered;
      for (const url of inlet.missing) missing.add(url);
      for (const url of inlet.rewritten) rewritten.add(url);
      this.next = d + 1;
      if (covered === of) return { missing, rewritten };
    }
    return undefined;
  }

  /** The Delta version of the first commit of `manifestVersion`, if the log has one. */
  private async firstOf(manifestVersion: number): Promise<number | undefined> {
    let lo = Math.max(this.next, manifestVersion - 1);
    // Usually the first commit at or after `lo` is already it.
    const atLo = await this.oursFrom(lo);
    if (atLo === 'gone') return undefined;
    if (atLo === undefined || atLo.manifestVersion > manifestVersion) return undefined;
    if (atLo.manifestVersion === manifestVersion) return atLo.version;
    // Bisect (lo, hi] for the first Delta version whose next commit of ours is of `manifestVersion` or later.
    let hi = this.through;
    lo = atLo.version;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const found = await this.oursFrom(mid);
      if (found === 'gone') return undefined;
      // None of ours from `mid` on, or one of this version or later: the first is before `mid` or at it.
      if (found === undefined || found.manifestVersion >= manifestVersion) hi = mid;
      else lo = found.version;
    }
    const found = await this.oursFrom(hi);
    if (found === 'gone' || found === undefined) return undefined;
    return found.manifestVersion === manifestVersion ? found.version : undefined;
  }

  /** The first commit of ours at or after `from` (up to `through`); `gone` when a commit is not there. */
  private async oursFrom(
    from: number,
  ): Promise<{ readonly version: number; readonly manifestVersion: number } | undefined | 'gone'> {
    for (let d = from; d <= this.through; d++) {
      const text = await this.delta.getCommit(d);
      if (text === undefined) return 'gone';
      const inlet = inletOf(d, text);
      if (inlet) return { version: d, manifestVersion: inlet.manifestVersion };
    }
    return undefined;
  }
}

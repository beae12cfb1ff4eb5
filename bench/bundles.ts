// `bundles`: every function bundled as the CDK bundles it (esbuild, minified ESM, SDK bundled), its size and
// our own share of it, and the CPU time a fresh Node process takes to import it (cold start), against a
// bundle that only constructs the SDK clients that function uses (the floor any implementation pays).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_ALIASES, LAMBDA_ESBUILD } from '../infra/lambda-esbuild.ts';
import { projectRoot } from '../local/paths.ts';
import type { FunctionName } from '../shared/config/function-env.ts';
import { functionEnv } from '../test/support/function-env.ts';
import { type Benchmark, log, quick } from './support.ts';
import { type Spread, spreadOf, turnsInRandomOrder } from './turns.ts';

export interface BundleFigures {
  readonly bytes: number;
  /** Bytes of our own code in the bundle (everything outside node_modules). */
  readonly ownBytes: number;
  /** Cold imports of each bundle, in fresh processes (`turns` of each, all bundles shuffled in every turn). */
  readonly turns: number;
  /** Median wall time of the cold imports. */
  readonly initMs: number;
  readonly sdkBaselineInitMs: number;
  /** initMs / sdkBaselineInitMs; the goal is at most 1.2. */
  readonly ratio: number;
  /** The same two in CPU time (user + system) of the import: steadier than wall time on a loaded machine. */
  readonly initCpuMs: number;
  readonly sdkBaselineInitCpuMs: number;
  /** initCpuMs / sdkBaselineInitCpuMs (medians). */
  readonly cpuRatio: number;
  /**
   * The fastest import of each over the fastest of its baseline: a shared machine only ever adds CPU time
   * (cache misses, migrations), so the minimum is the figure least moved by load.
   */
  readonly minCpuRatio: number;
  /** The SDK clients the baseline constructs: what the function talks to. */
  readonly clients: readonly string[];
  /** The baseline's size: the same clients with the SDK's defaults, bundled without the functions' aliases. */
  readonly sdkBaselineBytes: number;
  /**
   * The same clients bundled as the functions are (infra/lambda-esbuild.ts: the SDK's credential chain cut
   * to what Lambda uses), imported in the same turns: the floor of a hand-written function trimmed alike.
   */
  readonly trimmedSdkBaselineBytes: number;
  readonly trimmedSdkBaselineInitCpuMs: number;
  /** initCpuMs / trimmedSdkBaselineInitCpuMs. */
  readonly trimmedCpuRatio: number;
  /**
   * How far each figure moved over the turns: min and quartiles of each CPU time, and the quartiles of the
   * ratio taken turn by turn (the function's import over its baselines' in the same turn).
   */
  readonly spread: {
    readonly initCpuMs: Spread;
    readonly sdkBaselineInitCpuMs: Spread;
    readonly trimmedSdkBaselineInitCpuMs: Spread;
    readonly cpuRatio: Spread;
    readonly trimmedCpuRatio: Spread;
  };
  /**
   * With `--bundles-before=<commit>`: the same function bundled from that commit, imported in the same turns,
   * so a change is measured against one machine state (bench/README.md).
   */
  readonly before?: {
    readonly commit: string;
    readonly bytes: number;
    readonly initCpuMs: number;
    /** Its median over the same SDK baseline. */
    readonly cpuRatio: number;
    readonly spread: Spread;
    /** This bundle's import over that commit's, turn by turn: below 1 where the change saved CPU time. */
    readonly afterOverBefore: Spread;
  };
}

const CLIENTS = {
  DynamoDBClient: '@aws-sdk/client-dynamodb',
  S3Client: '@aws-sdk/client-s3',
  SQSClient: '@aws-sdk/client-sqs',
  EventBridgeClient: '@aws-sdk/client-eventbridge',
  GlueClient: '@aws-sdk/client-glue',
} as const;
type ClientName = keyof typeof CLIENTS;

/**
 * What each function's protocol steps call (docs/protocol.md): its SDK-only floor. The committer loads its
 * SQS client only when a commit fails for load (shared/runtime/committer.ts), so its floor has none.
 */
const FUNCTIONS: Record<FunctionName, readonly ClientName[]> = {
  batcher: ['DynamoDBClient', 'S3Client', 'SQSClient'],
  committer: ['DynamoDBClient', 'S3Client', 'EventBridgeClient'],
  sweeper: ['DynamoDBClient', 'SQSClient'],
  backfill: ['DynamoDBClient', 'S3Client', 'SQSClient'],
  // Glue: each bronze table is catalogued by default (docs/bronze.md "Catalog").
  sink: ['DynamoDBClient', 'S3Client', 'SQSClient', 'GlueClient'],
  maintenance: ['S3Client'],
};

/** The functions' own esbuild settings (infra/lambda-esbuild.ts). */
const OPTIONS = {
  ...LAMBDA_ESBUILD,
  mainFields: [...LAMBDA_ESBUILD.mainFields],
  banner: { js: LAMBDA_ESBUILD.banner },
  bundle: true,
  platform: 'node' as const,
  metafile: true,
  logLevel: 'silent' as const,
  nodePaths: [join(projectRoot, 'node_modules')],
};
/** With the aliases at their absolute paths under `root` (the project, or a commit's tree for `before`). */
const functionOptions = (root: string) => ({
  ...OPTIONS,
  alias: Object.fromEntries(Object.entries(LAMBDA_ALIASES).map(([name, path]) => [name, join(root, path)])),
});

/** The bundle CDK would build for a function, from the sources under `root`. */
export async function buildFunction(name: FunctionName, outfile: string, root = projectRoot) {
  const bundle = await build({
    ...functionOptions(root),
    entryPoints: [join(root, 'functions', `${name}.ts`)],
    outfile,
  });
  return bundle.metafile;
}

/**
 * What a function reads at module scope, with harmless values: its environment as the construct writes it
 * (the same writer), in a region.
 */
const envOf = (name: FunctionName) => ({
  ...process.env,
  AWS_REGION: 'us-east-1',
  NODE_NO_WARNINGS: '1',
  ...functionEnv(name),
});

/** One cold import in a fresh Node process: its wall time and the CPU it used (user + system). */
function importOnce(file: string, env: NodeJS.ProcessEnv): { wall: number; cpu: number } {
  const result = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const t = performance.now(); const c = process.cpuUsage(); await import(${JSON.stringify(file)}); ` +
        'const u = process.cpuUsage(c); console.log(performance.now() - t, (u.user + u.system) / 1000);',
    ],
    { env, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr}`);
  const [wall, cpu] = (result.stdout.trim().split('\n').pop() ?? '').split(' ').map(Number);
  return { wall: wall ?? Number.NaN, cpu: cpu ?? Number.NaN };
}

const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;

/** `--bundles-before=<commit>`: also bundle each function from that commit, imported in the same turns. */
const beforeCommit = process.argv
  .find((a) => a.startsWith('--bundles-before='))
  ?.slice('--bundles-before='.length);

export const bundles: Benchmark = {
  name: 'bundles',
  async run() {
    log('bundles: size and cold start of every function');
    // --quick: 11 turns of 18 imports, about 45 s on 2 quiet cores (docs/performance.md, "Cold starts").
    return { bundles: await coldStarts(quick ? 11 : 21, beforeCommit) };
  },
};

/** The files of one function: what is imported in every turn, in a shuffled order among all functions'. */
interface Files {
  readonly ours: string;
  readonly baseline: string;
  readonly trimmed: string;
  readonly before?: string;
}

export async function coldStarts(turns = 21, before?: string): Promise<Record<string, BundleFigures>> {
  const dir = mkdtempSync(join(tmpdir(), 'inlet-cold-'));
  try {
    const beforeRoot = before === undefined ? undefined : checkout(before, join(dir, 'before'));
    const names = Object.keys(FUNCTIONS) as FunctionName[];
    const files = new Map<FunctionName, Files>();
    const ownBytes = new Map<FunctionName, number>();
    for (const name of names) {
      const ours = join(dir, `${name}.mjs`);
      const metafile = await buildFunction(name, ours);
      ownBytes.set(
        name,
        Object.entries(Object.values(metafile?.outputs ?? {})[0]?.inputs ?? {})
          .filter(([path]) => !path.includes('node_modules'))
          .reduce((sum, [, input]) => sum + input.bytesInOutput, 0),
      );
      const { baseline, trimmed } = await buildBaselines(dir, FUNCTIONS[name]);
      const beforeFile = beforeRoot && join(dir, `${name}-before.mjs`);
      if (beforeRoot && beforeFile) await buildFunction(name, beforeFile, beforeRoot);
      files.set(name, { ours, baseline, trimmed, ...(beforeFile ? { before: beforeFile } : {}) });
    }
    // Every bundle once per turn, all functions' in one shuffled order (bench/turns.ts); a baseline two
    // functions share is imported once per turn.
    const all = new Map<string, NodeJS.ProcessEnv>();
    for (const name of names)
      for (const file of Object.values(files.get(name) ?? {})) all.set(file, envOf(name));
    const entries = [...all];
    const results = turnsInRandomOrder(entries, turns, ([file, env]) => importOnce(file, env));
    const times = new Map(entries.map(([file], i) => [file, results[i] ?? []]));
    const figures: Record<string, BundleFigures> = {};
    for (const name of names) {
      const f = files.get(name);
      const t = (file: string | undefined) => (file === undefined ? [] : (times.get(file) ?? []));
      if (!f) continue;
      const [ours, floor, trimmed] = [t(f.ours), t(f.baseline), t(f.trimmed)];
      const cpu = (xs: typeof ours) => xs.map((x) => x.cpu);
      const perTurn = (xs: typeof ours, ys: typeof ours) =>
        xs.map((x, i) => x.cpu / (ys[i]?.cpu ?? Number.NaN));
      const s = { ours: spreadOf(cpu(ours)), floor: spreadOf(cpu(floor)), trimmed: spreadOf(cpu(trimmed)) };
      const wall = { ours: spreadOf(ours.map((x) => x.wall)), floor: spreadOf(floor.map((x) => x.wall)) };
      const beforeTimes = f.before ? t(f.before) : undefined;
      figures[name] = {
        bytes: statSync(f.ours).size,
        ownBytes: ownBytes.get(name) ?? 0,
        turns,
        initMs: wall.ours.median,
        sdkBaselineInitMs: wall.floor.median,
        ratio: ratio(wall.ours.median, wall.floor.median),
        initCpuMs: s.ours.median,
        sdkBaselineInitCpuMs: s.floor.median,
        cpuRatio: ratio(s.ours.median, s.floor.median),
        minCpuRatio: ratio(s.ours.min, s.floor.min),
        clients: FUNCTIONS[name],
        sdkBaselineBytes: statSync(f.baseline).size,
        trimmedSdkBaselineBytes: statSync(f.trimmed).size,
        trimmedSdkBaselineInitCpuMs: s.trimmed.median,
        trimmedCpuRatio: ratio(s.ours.median, s.trimmed.median),
        spread: {
          initCpuMs: s.ours,
          sdkBaselineInitCpuMs: s.floor,
          trimmedSdkBaselineInitCpuMs: s.trimmed,
          cpuRatio: spreadOf(perTurn(ours, floor), 100),
          trimmedCpuRatio: spreadOf(perTurn(ours, trimmed), 100),
        },
        ...(before && f.before && beforeTimes
          ? {
              before: {
                commit: before,
                bytes: statSync(f.before).size,
                initCpuMs: spreadOf(cpu(beforeTimes)).median,
                cpuRatio: ratio(spreadOf(cpu(beforeTimes)).median, s.floor.median),
                spread: spreadOf(cpu(beforeTimes)),
                afterOverBefore: spreadOf(perTurn(ours, beforeTimes), 100),
              },
            }
          : {}),
      };
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The baselines of a set of clients, built once per set (the batcher and the backfill share theirs). */
const baselines = new Map<string, Promise<{ baseline: string; trimmed: string }>>();
function buildBaselines(dir: string, clients: readonly ClientName[]) {
  const key = `${dir}:${clients.join('-')}`;
  let built = baselines.get(key);
  if (!built) {
    built = (async () => {
      const stem = join(dir, `baseline-${clients.join('-')}`);
      writeFileSync(
        `${stem}.ts`,
        [
          ...clients.map((c) => `import { ${c} } from '${CLIENTS[c]}';`),
          `export const clients = [${clients.map((c) => `new ${c}({})`).join(', ')}];`,
        ].join('\n'),
      );
      await build({ ...OPTIONS, entryPoints: [`${stem}.ts`], outfile: `${stem}.mjs` });
      await build({
        ...functionOptions(projectRoot),
        entryPoints: [`${stem}.ts`],
        outfile: `${stem}-trimmed.mjs`,
      });
      return { baseline: `${stem}.mjs`, trimmed: `${stem}-trimmed.mjs` };
    })();
    baselines.set(key, built);
  }
  return built;
}

/** A commit's product sources (functions/, shared/, infra/) extracted under `into`, for `before`. */
function checkout(commit: string, into: string): string {
  const archive = spawnSync('git', ['archive', '--format=tar', commit, 'functions', 'shared', 'infra'], {
    cwd: projectRoot,
    maxBuffer: 1 << 28,
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit}: ${archive.stderr}`);
  mkdirSync(into, { recursive: true });
  const tar = spawnSync('tar', ['-x', '-C', into], { input: archive.stdout });
  if (tar.status !== 0) throw new Error(`extracting ${commit}: ${tar.stderr}`);
  return into;
}

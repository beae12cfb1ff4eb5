// `bundles`: every function bundled as the CDK bundles it (esbuild, minified ESM, SDK bundled), its size and
// our own share of it, and the time a fresh Node process takes to import it (cold start), against a bundle
// that only constructs the SDK clients that function uses (the floor any implementation pays).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_ALIASES, LAMBDA_ESBUILD } from '../infra/lambda-esbuild.ts';
import { projectRoot } from '../local/paths.ts';
import type { FunctionName } from '../shared/config/function-env.ts';
import { functionEnv } from '../test/support/function-env.ts';
import { type Benchmark, log, quick } from './support.ts';

export interface BundleFigures {
  readonly bytes: number;
  /** Bytes of our own code in the bundle (everything outside node_modules). */
  readonly ownBytes: number;
  /** Median of cold imports in fresh processes (9; 5 with `--quick`). */
  readonly initMs: number;
  readonly sdkBaselineInitMs: number;
  /** initMs / sdkBaselineInitMs; the goal is at most 1.2. */
  readonly ratio: number;
  /** The same two in CPU time (user + system) of the import: steadier than wall time on a loaded machine. */
  readonly initCpuMs: number;
  readonly sdkBaselineInitCpuMs: number;
  readonly cpuRatio: number;
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
 * SQS client only when a commit fails for load (shared/runtime/pipeline.ts), so its floor has none.
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

/** The functions' own esbuild settings (infra/lambda-esbuild.ts), the aliases at their absolute paths. */
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
const FUNCTION_OPTIONS = {
  ...OPTIONS,
  alias: Object.fromEntries(
    Object.entries(LAMBDA_ALIASES).map(([name, path]) => [name, join(projectRoot, path)]),
  ),
};

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

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 10) / 10;
};

/**
 * The bundle and its baselines imported in turns, so a change of load on a shared machine hits all alike;
 * CPU time is kept too, as it hardly moves with load while wall time does. One median of each per file.
 */
function initTimes(files: readonly string[], runs: number, env: NodeJS.ProcessEnv) {
  const times = files.map(() => [] as { wall: number; cpu: number }[]);
  for (let i = 0; i < runs; i++)
    for (const [j, file] of files.entries()) times[j]?.push(importOnce(file, env));
  return times.map((t) => ({ wall: median(t.map((x) => x.wall)), cpu: median(t.map((x) => x.cpu)) }));
}

const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;

export const bundles: Benchmark = {
  name: 'bundles',
  async run() {
    log('bundles: size and cold start of every function');
    return { bundles: await coldStarts(quick ? 5 : 9) };
  },
};

export async function coldStarts(runs = 9): Promise<Record<string, BundleFigures>> {
  const dir = mkdtempSync(join(tmpdir(), 'inlet-cold-'));
  try {
    const figures: Record<string, BundleFigures> = {};
    for (const [name, clients] of Object.entries(FUNCTIONS) as [FunctionName, readonly ClientName[]][]) {
      const outfile = join(dir, `${name}.mjs`);
      const bundle = await build({
        ...FUNCTION_OPTIONS,
        entryPoints: [join(projectRoot, 'functions', `${name}.ts`)],
        outfile,
      });
      const ownBytes = Object.entries(Object.values(bundle.metafile?.outputs ?? {})[0]?.inputs ?? {})
        .filter(([path]) => !path.includes('node_modules'))
        .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
      const baselineSource = join(dir, `${name}-baseline.ts`);
      writeFileSync(
        baselineSource,
        [
          ...clients.map((c) => `import { ${c} } from '${CLIENTS[c]}';`),
          `export const clients = [${clients.map((c) => `new ${c}({})`).join(', ')}];`,
        ].join('\n'),
      );
      const baselineFile = join(dir, `${name}-baseline.mjs`);
      await build({ ...OPTIONS, entryPoints: [baselineSource], outfile: baselineFile });
      const trimmedFile = join(dir, `${name}-baseline-trimmed.mjs`);
      await build({ ...FUNCTION_OPTIONS, entryPoints: [baselineSource], outfile: trimmedFile });
      const [ours, floor, trimmed] = initTimes([outfile, baselineFile, trimmedFile], runs, envOf(name));
      if (!ours || !floor || !trimmed) throw new Error(`no times for ${name}`);
      figures[name] = {
        bytes: statSync(outfile).size,
        ownBytes,
        initMs: ours.wall,
        sdkBaselineInitMs: floor.wall,
        ratio: ratio(ours.wall, floor.wall),
        initCpuMs: ours.cpu,
        sdkBaselineInitCpuMs: floor.cpu,
        cpuRatio: ratio(ours.cpu, floor.cpu),
        clients,
        sdkBaselineBytes: statSync(baselineFile).size,
        trimmedSdkBaselineBytes: statSync(trimmedFile).size,
        trimmedSdkBaselineInitCpuMs: trimmed.cpu,
        trimmedCpuRatio: ratio(ours.cpu, trimmed.cpu),
      };
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `npm run bench [-- --quick]`: cost, throughput and start-up, measured on the emulator, written to
// bench/results.json (what each number means: docs/performance.md). Requests are counted by SDK middleware on
// every client the handlers use; nothing is estimated except what AWS itself does (S3 sending each event).
// Each benchmark is one file; this runner only orders them and merges their result keys.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator } from '../local/emulator.ts';
import { projectRoot } from '../local/paths.ts';
import { createClients, destroyClients } from '../shared/aws/clients.ts';
import { emulatorTarget } from '../shared/aws/target.ts';
import { awsLatency } from './aws-latency.ts';
import { backfill } from './backfill.ts';
import { bundles } from './bundles.ts';
import { cliTimings } from './cli.ts';
import { cost } from './cost.ts';
import { groupCommit } from './group-commit.ts';
import { incremental } from './incremental.ts';
import { latency } from './latency.ts';
import { peers } from './peers.ts';
import { rawWrites } from './raw-writes.ts';
import { sink } from './sink.ts';
import { type BenchContext, type Benchmark, log, quick, seconds } from './support.ts';

/** `npx inlet --help` and `npx inlet status` against a local pipeline (bench/cli.ts). */
const cli: Benchmark = {
  name: 'cli',
  run: async ({ observer, endpoint }) => ({
    cli: await cliTimings(observer, endpoint, { runs: quick ? 5 : 15, log }),
  }),
};

/** In order: a benchmark may read an earlier one's results or fixtures (raw writes read the cost's time). */
const BENCHMARKS: readonly Benchmark[] = [
  cost,
  latency,
  rawWrites,
  incremental,
  backfill,
  groupCommit,
  bundles,
  cli,
  sink,
  peers,
  awsLatency,
];

/** `--only a,b`: just those (a benchmark's prerequisites included by the caller); results are printed only. */
const onlyArgument = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
/** `--aws-latency`: the side-by-side of docs/performance.md, both modes, and what it needs; printed only. */
const only = process.argv.includes('--aws-latency')
  ? ['incremental', 'backfill', 'groupCommit', 'sink', 'peers', 'awsLatency']
  : onlyArgument;

async function main(): Promise<void> {
  const begun = Date.now();
  const emulator = await startEmulator();
  const target = emulatorTarget(emulator.endpoint);
  const observer = createClients(target);
  const results: Record<string, unknown> = {
    mode: quick ? 'quick' : 'full',
    measuredAt: new Date().toISOString(),
    where: 'moto server on this machine: relative numbers; AWS is faster per request',
  };
  const context: BenchContext = {
    target,
    endpoint: emulator.endpoint,
    observer,
    results,
    fixtures: new Map(),
  };
  try {
    for (const benchmark of BENCHMARKS.filter((b) => !only || only.includes(b.name)))
      Object.assign(results, await benchmark.run(context));
    results.benchSeconds = seconds(Date.now() - begun);
    if (!only)
      writeFileSync(join(projectRoot, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log(JSON.stringify(results, null, 2));
  } finally {
    destroyClients(observer);
    await emulator.stop();
  }
}

await main();

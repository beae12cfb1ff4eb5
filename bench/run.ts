// `npm run bench [-- --quick]`: cost, throughput and start-up, measured on the emulator, written to
// bench/results.json (what each number means: docs/performance.md). Requests are counted by SDK middleware on
// every client the handlers use; nothing is estimated except what AWS itself does (S3 sending each event).
// Each benchmark is one file; this runner only orders them and merges their result keys.
import { rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { createClients, destroyClients } from '../local/aws/clients.ts';
import { startEmulator } from '../local/emulator.ts';
import { projectRoot } from '../local/paths.ts';
import { emulatorTarget } from '../shared/kernel/aws/target.ts';
import { awsLatency } from './aws-latency.ts';
import { backfill } from './backfill.ts';
import { bundles } from './bundles.ts';
import { cliTimings } from './cli.ts';
import { cost } from './cost.ts';
import { cpuSecondsSoFar } from './cpu-time.ts';
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
    // Quick: 3 runs of each command, one timed start (each is a whole local pipeline) and no uncached one.
    // Full: 7 and 3 (medians still), which keeps the full run within its budget (docs/performance.md).
    cli: await cliTimings(observer, endpoint, {
      runs: quick ? 3 : 7,
      starts: quick ? 1 : 3,
      uncached: !quick,
      log,
    }),
  }),
};

/**
 * In order: a benchmark may read an earlier one's fixtures (the AWS-latency pass the incremental bucket and
 * the sink's files; raw writes measure both of their sides themselves). Start-up (bundles, cli) needs none and
 * comes last, so a full run cut short has the comparisons of issue 24 first.
 */
const BENCHMARKS: readonly Benchmark[] = [
  cost,
  latency,
  rawWrites,
  incremental,
  backfill,
  groupCommit,
  sink,
  peers,
  awsLatency,
  bundles,
  cli,
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

/** The results so far, rewritten after each benchmark and removed once bench/results.json is written. */
const partialPath = join(projectRoot, 'bench', 'results.partial.json');

async function main(): Promise<void> {
  const begun = Date.now();
  const loadSamples: number[] = [];
  const sampleLoad = () => loadSamples.push(Math.round((loadavg()[0] ?? 0) * 100) / 100);
  sampleLoad();
  const sampler = setInterval(sampleLoad, 10_000);
  sampler.unref();
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
    cpuSeconds: () => cpuSecondsSoFar(emulator.pid),
  };
  try {
    // What the run's time is made of, for keeping `--quick` within its budget: each benchmark's wall time,
    // and its CPU time (this process, what it waited for, the emulator), which the machine's load hardly moves.
    const benchmarkSeconds: Record<string, number> = {};
    const benchmarkCpuSeconds: Record<string, number> = {};
    const cpuAtStart = cpuSecondsSoFar(emulator.pid);
    for (const benchmark of BENCHMARKS.filter((b) => !only || only.includes(b.name))) {
      const started = Date.now();
      const cpu = cpuSecondsSoFar(emulator.pid);
      Object.assign(results, await benchmark.run(context));
      benchmarkSeconds[benchmark.name] = seconds(Date.now() - started);
      benchmarkCpuSeconds[benchmark.name] = Math.round((cpuSecondsSoFar(emulator.pid) - cpu) * 10) / 10;
      log(
        `${benchmark.name}: ${benchmarkSeconds[benchmark.name]} s, ${benchmarkCpuSeconds[benchmark.name]} CPU s`,
      );
      // What a run stopped part-way has measured so far (the full run takes most of an hour here).
      if (!only) writeFileSync(partialPath, `${JSON.stringify({ ...results, benchmarkSeconds }, null, 2)}\n`);
    }
    results.benchmarkSeconds = benchmarkSeconds;
    results.benchmarkCpuSeconds = benchmarkCpuSeconds;
    results.benchSeconds = seconds(Date.now() - begun);
    results.benchCpuSeconds = Math.round((cpuSecondsSoFar(emulator.pid) - cpuAtStart) * 10) / 10;
    const sorted = [...loadSamples].sort((a, b) => a - b);
    // The 1-minute load average through the run (every 10 s): on 2 cores, above 2 every figure waited.
    results.loadAverage1m = {
      min: sorted[0] ?? 0,
      median: sorted[Math.floor(sorted.length / 2)] ?? 0,
      max: sorted[sorted.length - 1] ?? 0,
      cores: availableParallelism(),
    };
    if (!only) {
      writeFileSync(join(projectRoot, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
      rmSync(partialPath, { force: true });
    }
    console.log(JSON.stringify(results, null, 2));
  } finally {
    clearInterval(sampler);
    destroyClients(observer);
    await emulator.stop();
  }
}

await main();

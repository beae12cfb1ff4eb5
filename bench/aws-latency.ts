// `awsLatency`: the benchmarks whose worth depends on waiting for AWS (parallel backfill partitions, group
// commit, the sink's parallel reads, the peers, the naive loader) run again with every request held as long
// as AWS takes to answer it (local/aws-latencies.ts), through a proxy in front of the same emulator
// (local/latency-proxy.ts). The emulator's own time stays on top: these are upper bounds of AWS's times.

import { createClients, destroyClients } from '../local/aws/clients.ts';
import { AWS_LATENCIES, latencyOf } from '../local/aws-latencies.ts';
import { startLatencyProxy } from '../local/latency-proxy.ts';
import { emulatorTarget } from '../shared/kernel/aws/target.ts';
import { backfill } from './backfill.ts';
import { groupCommit } from './group-commit.ts';
import { HISTORY, type HistoryFixture, inletPickup, naivePickup } from './incremental.ts';
import { peers } from './peers.ts';
import { sink } from './sink.ts';
import { type BenchContext, type Benchmark, log, pipeline, putObjects, SIZES, seconds } from './support.ts';

/**
 * The naive list-scan-diff job once more on the incremental benchmark's bucket, for the same number of new
 * files: its requests do not change with latency, its time does (one LIST page after the other). Then Inlet
 * picks up the same new files from their events, as in the incremental benchmark, so the two compare in
 * this mode too.
 */
async function naive(ctx: BenchContext) {
  const fixture = ctx.fixtures.get(HISTORY) as HistoryFixture | undefined;
  if (!fixture) throw new Error('the naive loader needs the incremental benchmark to run first');
  const fresh = fixture.freshKeys(SIZES.fresh);
  await putObjects(ctx.observer, fixture.bucket, fresh);
  log(`aws latency: naive at ${fixture.objects + SIZES.fresh} objects: list, scan, diff, record`);
  const clients = createClients(ctx.target);
  try {
    const run = await naivePickup(clients, fixture.bucket, fixture.control);
    if (run.found !== SIZES.fresh) throw new Error(`naive found ${run.found} new files, not ${SIZES.fresh}`);
    log(`aws latency: inlet on the same ${SIZES.fresh} new files, from their events`);
    const h = await pipeline(clients, 'hist', true);
    const inlet = await inletPickup(h, ctx.observer, fixture.bucket, fresh, ctx.hops?.lambdaInvokeMs);
    return {
      new: SIZES.fresh,
      existing: fixture.objects,
      naiveSeconds: seconds(run.ms),
      naiveRequests: run.requests,
      naiveWriteUnits: run.writeUnits,
      ...inlet,
    };
  } finally {
    destroyClients(clients);
  }
}

export const awsLatency: Benchmark = {
  name: 'awsLatency',
  async run(ctx) {
    const proxy = await startLatencyProxy({ upstream: ctx.endpoint, latencyMs: latencyOf });
    // `observer` stays on the emulator: setting up and looking are not what is measured.
    const slow: BenchContext = {
      ...ctx,
      target: emulatorTarget(proxy.endpoint),
      endpoint: proxy.endpoint,
      hops: {
        lambdaInvokeMs: AWS_LATENCIES.lambdaInvoke.ms,
        stepFunctionsTaskMs: AWS_LATENCIES.stepFunctionsTask.ms,
      },
    };
    try {
      const results: Record<string, unknown> = {};
      const secondsOf: Record<string, number> = {};
      // One benchmark failing here (the full run's 100,000-object backfill can push moto past the SDK's
      // 30 s timeout) is recorded as its error: the emulator's own figures above are kept either way.
      const attempt = async (name: string, run: () => Promise<Record<string, unknown>>) => {
        log(`aws latency: ${name}`);
        const started = Date.now();
        try {
          Object.assign(results, await run());
        } catch (error) {
          log(`aws latency: ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
          results[name] = { error: error instanceof Error ? error.message : String(error) };
        }
        secondsOf[name] = seconds(Date.now() - started);
      };
      // Backfill first: the naive run adds objects to the bucket the backfill lists.
      for (const benchmark of [backfill, groupCommit, sink, peers])
        await attempt(benchmark.name, () => benchmark.run(slow));
      await attempt('incrementalVsNaive', async () => ({ incrementalVsNaive: await naive(slow) }));
      return {
        awsLatency: {
          latenciesMs: AWS_LATENCIES,
          requestsHeld: proxy.delayed(),
          seconds: secondsOf,
          backfill: results.backfill,
          groupCommit: results.groupCommit,
          sink: results.sink,
          peers: results.peers,
          incrementalVsNaive: results.incrementalVsNaive,
        },
      };
    } finally {
      await proxy.stop();
    }
  },
};

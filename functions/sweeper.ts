// Scheduled sweeper: re-requests commits of sealed batches and reserved versions that nobody finished.
import { runtimeFromEnv } from '../shared/aws/runtime.ts';
import { METRIC } from '../shared/metrics.ts';
import { sweepStale } from '../shared/usecases/sweep.ts';

const runtime = runtimeFromEnv('inlet-sweeper');
const staleAfterMs = Number(process.env.INLET_STALE_AFTER_SECONDS ?? 300) * 1000;

export const handler = async (): Promise<{ resent: number; stalePending: number }> => {
  const result = await sweepStale(runtime, staleAfterMs);
  runtime.metrics.count(METRIC.staleBatches, result.resent);
  runtime.metrics.count(METRIC.stalePending, result.stalePending);
  runtime.metrics.flush();
  return result;
};

import type { TaskInvoker } from '../../local/backfill-executor.ts';
import { makeBackfillHandler } from '../../shared/handlers/backfill-handler.ts';
import type { MetricsSink } from '../../shared/metrics.ts';
import type { BackfillDeps } from '../../shared/usecases/backfill.ts';

/**
 * The backfill handler in this process, behind the state machine's Lambda task door: for what the bundle
 * cannot host, dependencies a test wraps with faults, and definitions run on resources no stack made (the
 * bench, unit tests of the executor). The payload crosses as JSON, as it does to a function; a thrown error
 * becomes the function error Lambda reports ({errorType: its name, errorMessage}).
 */
export function inProcessBackfill(deps: BackfillDeps & { readonly metrics: MetricsSink }): TaskInvoker {
  const handler = makeBackfillHandler(deps);
  return {
    async invoke(_functionLogicalId, payload) {
      try {
        const result = await handler(JSON.parse(JSON.stringify(payload)));
        return { ok: true, payload: JSON.parse(JSON.stringify(result ?? null)) };
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        return { ok: false, error: { errorType: e.name, errorMessage: e.message } };
      }
    },
  };
}

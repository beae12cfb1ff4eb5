import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import { type SweepDeps, type SweepResult, sweepStale } from './sweep.ts';

/** A run's settings: the sweeper's environment (shared/config/function-env.ts), read by its runtime. */
export interface SweeperSettings {
  readonly staleAfterMs: number;
  readonly maxResends: number;
  readonly marginMs: number;
  readonly budgetMs: number;
  readonly pageSize: number;
}

export type SweeperHandler = (
  event?: unknown,
  context?: { getRemainingTimeInMillis(): number },
) => Promise<SweepResult>;

/** The scheduled sweeper: one bounded run, its counts as metrics. */
export function makeSweeperHandler(
  deps: SweepDeps & { readonly metrics: MetricsSink },
  settings: SweeperSettings,
): SweeperHandler {
  return async (_event, context) => {
    // The Lambda's own remaining time decides; the configured budget only where there is no context.
    const budgetMs = context ? context.getRemainingTimeInMillis() - settings.marginMs : settings.budgetMs;
    try {
      const result = await sweepStale(deps, settings.staleAfterMs, {
        maxResends: settings.maxResends,
        budgetMs: Math.max(budgetMs, 1000),
        pageSize: settings.pageSize,
      });
      const m = deps.metrics;
      m.count(METRIC.staleBatches, result.resent);
      m.count(METRIC.stalePending, result.stalePending);
      m.count(METRIC.unpublishedResent, result.unpublished);
      m.count(METRIC.sweepDeferred, result.deferred);
      m.count(METRIC.sweepErrors, result.errors);
      return result;
    } finally {
      deps.metrics.flush();
    }
  };
}

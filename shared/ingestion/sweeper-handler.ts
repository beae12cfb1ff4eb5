import { DEFAULTS } from '../kernel/defaults.ts';
import { ConfigError } from '../kernel/errors.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import * as z from '../kernel/zod.ts';
import { issueLines } from '../kernel/zod.ts';
import { type SweepDeps, type SweepResult, sweepStale } from './sweep.ts';

const positiveInt = (fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.positive()), fallback);

/** The sweeper's environment (set by infra/functions.ts; defaults fit a 1-minute, 5-minute-schedule run). */
const sweeperEnv = z.object({
  /** Sealed batches and reservations older than this are re-requested (the sweep interval). */
  INLET_STALE_AFTER_SECONDS: positiveInt(DEFAULTS.sweepIntervalMinutes * 60),
  /** Commit requests re-sent per run at most, oldest first. */
  INLET_SWEEP_MAX_RESENDS: positiveInt(DEFAULTS.sweeper.maxResends),
  /** Stop starting calls this long before the Lambda timeout. */
  INLET_SWEEP_MARGIN_SECONDS: positiveInt(DEFAULTS.sweeper.marginSeconds),
  /** The budget when no Lambda context says how long is left (local mode). */
  INLET_SWEEP_BUDGET_SECONDS: positiveInt(DEFAULTS.sweeper.budgetSeconds),
  INLET_SWEEP_PAGE_SIZE: positiveInt(DEFAULTS.sweeper.pageSize),
});

export interface SweeperSettings {
  readonly staleAfterMs: number;
  readonly maxResends: number;
  readonly marginMs: number;
  readonly budgetMs: number;
  readonly pageSize: number;
}

/** Validated at start-up: a typo in a number fails the deploy's first invocation loudly, not every sweep. */
export function sweeperSettingsFromEnv(env: NodeJS.ProcessEnv): SweeperSettings {
  const parsed = sweeperEnv.safeParse(env);
  if (!parsed.success) throw new ConfigError(issueLines(parsed.error));
  const e = parsed.data;
  return {
    staleAfterMs: e.INLET_STALE_AFTER_SECONDS * 1000,
    maxResends: e.INLET_SWEEP_MAX_RESENDS,
    marginMs: e.INLET_SWEEP_MARGIN_SECONDS * 1000,
    budgetMs: e.INLET_SWEEP_BUDGET_SECONDS * 1000,
    pageSize: e.INLET_SWEEP_PAGE_SIZE,
  };
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

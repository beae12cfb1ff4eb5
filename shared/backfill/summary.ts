// What a run reports: its running totals, the summary each state carries (the execution's output), and the
// failure cause an execution ends with.
import type { Partition } from './partitions.ts';
import type { BackfillPlan, BackfillSummary, BackfillTotals } from './request.ts';
import { CAUSE_LIMIT_CHARS } from './state-size.ts';

export const add = (a: BackfillTotals, b: BackfillTotals): BackfillTotals => ({
  listed: a.listed + b.listed,
  matched: a.matched + b.matched,
  enqueued: a.enqueued + b.enqueued,
  alreadyIngested: a.alreadyIngested + b.alreadyIngested,
  wouldEnqueue: a.wouldEnqueue + b.wouldEnqueue,
});

export function summarize(
  plan: BackfillPlan,
  execution: number,
  totals: BackfillTotals,
  partitions: number,
  pending: readonly Partition[],
): BackfillSummary {
  const complete = pending.length === 0;
  const only = partitions === 1 ? pending[0] : undefined;
  return {
    table: plan.table,
    mode: plan.mode,
    dryRun: plan.dryRun,
    run: plan.run,
    executions: execution,
    ...totals,
    partitions,
    pendingPartitions: pending.length,
    lastKey: only?.startAfter ?? null,
    ...(complete ? {} : { resume: { partitions: pending } }),
    complete,
  };
}

/**
 * The execution's failure cause (Step Functions keeps at most 32,768 characters): the summary with every
 * resume point and the first failure; when the resume points do not fit, the summary says they are in the
 * output of the execution's last Merge state, where `inlet backfill status` reads them.
 */
export function failedCause(summary: BackfillSummary, failure: { Error: string; Cause: string }) {
  const cut = { Error: failure.Error.slice(0, 256), Cause: failure.Cause.slice(0, 4096) };
  const full = JSON.stringify({ summary, failure: cut });
  if (full.length <= CAUSE_LIMIT_CHARS) return { error: cut.Error, cause: full };
  const { resume: _, ...rest } = summary;
  return {
    error: cut.Error,
    cause: JSON.stringify({ summary: { ...rest, resumeInHistory: true }, failure: cut }),
  };
}

import { type BackfillDeps, BackfillRun } from '../../../shared/backfill/backfill.ts';
import type { PartitionResult, PartitionTask } from '../../../shared/backfill/request.ts';

/**
 * A whole run driven without the state machine, round by round as it would (Plan, each partition's steps,
 * Merge), with a bound on the steps: a partition that never ends fails the test instead of hanging it. A
 * step that throws ends its partition with the failure, as the state machine's Catch does.
 */
export async function drive(
  deps: BackfillDeps,
  input: Record<string, unknown>,
  options: { readonly maxSteps?: number } = {},
) {
  const run = new BackfillRun(deps);
  let state = await run.plan(input, { name: 'run-1', startTime: '2026-11-30T12:00:00.000Z' });
  let steps = 0;
  const max = options.maxSteps ?? 200;
  while (state.next === 'round' || state.next === 'continue') {
    const results: PartitionResult[] = [];
    for (const partition of state.pending) {
      let task: PartitionTask = BackfillRun.task(state, partition);
      let failure: PartitionResult['failure'];
      while (task.next === 'step') {
        if (++steps > max) throw new Error(`the run took more than ${max} steps: a partition does not end`);
        try {
          task = await run.step(task);
        } catch (error) {
          failure = { Error: (error as Error).name, Cause: (error as Error).message };
          break;
        }
      }
      results.push({
        partition: task.partition,
        totals: task.totals,
        done: failure ? false : task.done,
        ...(failure ? { failure } : {}),
      });
    }
    state = run.merge(state, results);
    if (state.next === 'continue' && state.continuation)
      state = await run.plan(state.continuation.input, {
        name: 'run-1-c',
        startTime: '2026-11-30T12:00:00.000Z',
      });
  }
  return { state, steps };
}

import { isThrottle, UnknownOutcomeError } from '../kernel/errors.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { RETRYABLE_ERRORS } from '../kernel/names.ts';
import { type BackfillDeps, BackfillRun } from './backfill.ts';
import {
  type BackfillState,
  InvalidBackfillInput,
  type PartitionResult,
  type PartitionTask,
} from './request.ts';
import { MAX_STEP_ERROR_CHARS } from './state-size.ts';

/** Error names the state machine retries with backoff: defined in shared/kernel/names.ts. */
export { RETRYABLE_ERRORS };

/** What the state machine's Lambda tasks send (infra/backfill.ts builds these payloads). */
export type BackfillTask =
  | {
      readonly action: 'plan';
      readonly input: unknown;
      readonly execution: { readonly name: string; readonly startTime: string };
    }
  /** One partition's step, inside the Map. */
  | { readonly action: 'step'; readonly state: PartitionTask }
  /**
   * After the Map: the round's state, with each partition's result in `results` (the Map's ResultPath),
   * sent once: the task's input is held to the same 256 KiB as a state.
   */
  | {
      readonly action: 'merge';
      readonly state: BackfillState & { readonly results?: readonly PartitionResult[] };
      /** Older definitions sent the results beside the state as well. */
      readonly results?: readonly PartitionResult[];
    };

/**
 * Names the error so the state machine can tell a retry from a report: throttling and unknown outcomes
 * get the retryable names; invalid input and refusals (access denied, no such bucket) keep theirs and end
 * the run with the resume point.
 */
export function taskError(error: unknown): Error {
  if (error instanceof InvalidBackfillInput) return error;
  const throttled = isThrottle(error);
  const message = error instanceof Error ? error.message : String(error);
  const named = (name: string) => Object.assign(new Error(message, { cause: error }), { name });
  if (throttled) return named(RETRYABLE_ERRORS.throttled);
  // Timeouts, 5xx, resets (the adapters classify every SDK error): may succeed next time. A refusal that
  // is not a throttle (AccessDenied, NoSuchBucket) or a bug will not: reported at once, with the resume point.
  if (error instanceof UnknownOutcomeError) return named(RETRYABLE_ERRORS.transient);
  return error instanceof Error ? error : new Error(message);
}

/** A Plan's or Merge's error ends the execution: its cause is at most 32,768 characters. */
const MAX_TASK_ERROR_CHARS = 12_000;

/**
 * The error as Lambda will report it (its name, its message and its stack's lines, as JSON), cut to size:
 * a step's failure travels in the Map's results with every other partition's (shared/backfill/state-size.ts),
 * so its message is cut and its stack is its first line; the whole message is in the function's log.
 */
function short(error: Error, chars: number): Error {
  if (error.message.length > chars) error.message = `${error.message.slice(0, chars - 1)}…`;
  error.stack = `${error.name}: ${error.message}`;
  return error;
}

export type BackfillHandler = (task: BackfillTask) => Promise<BackfillState | PartitionTask>;

/** The backfill Lambda: one function, three actions (plan, step, merge), called by the state machine. */
export function makeBackfillHandler(deps: BackfillDeps & { readonly metrics: MetricsSink }): BackfillHandler {
  const run = new BackfillRun(deps);
  return async (task) => {
    try {
      if (task.action === 'plan') return await run.plan(task.input, task.execution);
      if (task.action === 'step') return await run.step(task.state);
      if (task.action === 'merge') {
        const { results = task.results ?? [], ...state } = task.state;
        return run.merge(state, results);
      }
      throw new Error(`unknown backfill action ${JSON.stringify((task as { action?: unknown }).action)}`);
    } catch (error) {
      const named = taskError(error);
      deps.log.error('backfill task failed', {
        action: task.action,
        error: named.name,
        detail: named.message,
      });
      throw short(named, task.action === 'step' ? MAX_STEP_ERROR_CHARS : MAX_TASK_ERROR_CHARS);
    } finally {
      deps.metrics.flush();
    }
  };
}

import type { BackfillSummary } from '../../shared/backfill/request.ts';

// What both backends (Step Functions, the local executor) report, and what the renderer prints.

/** A run (an execution and its continuations) as the CLI shows it. */
export interface RunView {
  readonly execution: string;
  readonly status: string;
  /** Every execution of the run, first to last. */
  readonly executions: string[];
  readonly summary?: BackfillSummary;
  readonly error?: string;
  readonly cause?: string;
  /** For a failed or interrupted run: how to go on from where it stopped. */
  readonly resume?: string;
}

export interface Backfills {
  start(input: Record<string, unknown>, name: string, wait: boolean): Promise<string>;
  view(execution: string): Promise<RunView>;
}

export const lastSegment = (arnOrName: string) => arnOrName.split(':').at(-1) ?? arnOrName;

export function resumeHint(input: Record<string, unknown> | undefined, summary: BackfillSummary | undefined) {
  // Several partitions: each has its own cursor; the state machine input carries them all.
  if (!summary?.lastKey && summary?.resume && summary.partitions > 1) {
    const { resume: _, ...given } = input ?? {};
    return `start the state machine with this input: ${JSON.stringify({ ...given, partitions: summary.resume.partitions })}`;
  }
  if (!summary?.lastKey) return 'nothing was listed yet: start it again';
  const flags = [`--table ${summary.table}`];
  if (input?.prefix) flags.push(`--prefix '${input.prefix}'`);
  if (input?.modifiedAfter) flags.push(`--modified-after ${input.modifiedAfter}`);
  if (input?.modifiedBefore) flags.push(`--modified-before ${input.modifiedBefore}`);
  if (input?.glob) flags.push(`--glob '${input.glob}'`);
  return `inlet backfill start ${flags.join(' ')} --start-after '${summary.lastKey.replace(/'/g, "'\\''")}'`;
}

/**
 * A Lambda task's error, as Step Functions gives it as the cause: the function's error payload as JSON
 * (`{"errorType", "errorMessage", "trace"}`); its message is what a person wants to read.
 */
function functionErrorMessage(cause: string | undefined): string | undefined {
  try {
    const payload = JSON.parse(cause ?? '') as { errorType?: unknown; errorMessage?: unknown };
    return typeof payload.errorType === 'string' && typeof payload.errorMessage === 'string'
      ? payload.errorMessage
      : cause;
  } catch {
    return cause;
  }
}

/**
 * Failure causes carry the state at the failed step (infra/backfill.ts DescribeFailure), whose failure is
 * the failed task's error; a step that failed outside it (the plan) has the task's error as the cause.
 */
export function parseCause(cause: string | undefined): { summary?: BackfillSummary; detail?: string } {
  try {
    const parsed = JSON.parse(cause ?? '') as {
      summary?: BackfillSummary;
      failure?: { Cause?: string };
    };
    if (parsed.summary === undefined && parsed.failure === undefined)
      return { detail: functionErrorMessage(cause) };
    return { summary: parsed.summary, detail: functionErrorMessage(parsed.failure?.Cause) };
  } catch {
    return { detail: cause };
  }
}

import type { BackfillSummary } from '../../shared/backfill/request.ts';

// What `inlet backfill` reports of a run (deployed or local: both through Step Functions' API), and what
// the renderer prints.

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
  start(input: Record<string, unknown>, name: string): Promise<string>;
  view(execution: string): Promise<RunView>;
}

export const lastSegment = (arnOrName: string) => arnOrName.split(':').at(-1) ?? arnOrName;

export function resumeHint(input: Record<string, unknown> | undefined, summary: BackfillSummary | undefined) {
  // Several partitions, or cursors that are more than a key (an inventory file's row, a versions listing's
  // version marker): the state machine input carries each partition with its cursor.
  const cursors = summary?.resume?.partitions ?? [];
  const rich = cursors.some((p) => p.file !== undefined || p.versionIdMarker !== undefined);
  if (summary?.resume && (rich || (!summary.lastKey && summary.partitions > 1))) {
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

/** A Lambda function error's cause: the function's error document (Node.js runtime: errorType, errorMessage, trace). */
function functionErrorMessage(cause: string | undefined): string | undefined {
  try {
    const document = JSON.parse(cause ?? '') as { errorMessage?: unknown };
    return typeof document.errorMessage === 'string' ? document.errorMessage : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Failure causes carry the state at the failed step (infra/backfill.ts DescribeFailure), whose own cause is,
 * for a function error, Lambda's error document; the message in it is what the user needs.
 */
export function parseCause(cause: string | undefined): { summary?: BackfillSummary; detail?: string } {
  try {
    const parsed = JSON.parse(cause ?? '') as {
      summary?: BackfillSummary;
      failure?: { Cause?: string };
    };
    if (parsed.summary || parsed.failure) {
      const inner = parsed.failure?.Cause;
      return { summary: parsed.summary, detail: functionErrorMessage(inner) ?? inner };
    }
  } catch {
    // Not JSON: a plain cause.
  }
  return { detail: functionErrorMessage(cause) ?? cause };
}

import picomatch from 'picomatch';
import { z } from 'zod';
import type { PipelineConfig, TableConfig } from '../config.ts';
import { InletError } from '../errors.ts';

/** The state machine input fails validation: the execution fails with this error name and the problems. */
export class InvalidBackfillInput extends InletError {
  constructor(readonly problems: readonly string[]) {
    super(`invalid backfill input:\n- ${problems.join('\n- ')}`, { retryable: false });
    this.name = 'InvalidBackfillInput';
  }
}

const isoDate = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO-8601 date or date-time, e.g. 2026-01-31')
  .transform((v) => new Date(v).toISOString());

export const totalsSchema = z.object({
  /** Objects S3 listed (before any filter). */
  listed: z.number().int().nonnegative(),
  /** Listed objects that pass the time range, the glob and the table's own routing. */
  matched: z.number().int().nonnegative(),
  /** Matched files sent to the ingest queue (0 in a dry run). */
  enqueued: z.number().int().nonnegative(),
  /** Matched files the ledger already has a claim for: skipped. */
  alreadyIngested: z.number().int().nonnegative(),
  /** Dry run: what would have been enqueued. */
  wouldEnqueue: z.number().int().nonnegative(),
});
export type BackfillTotals = z.infer<typeof totalsSchema>;
export const ZERO_TOTALS: BackfillTotals = {
  listed: 0,
  matched: 0,
  enqueued: 0,
  alreadyIngested: 0,
  wouldEnqueue: 0,
};

/** What a continued execution carries over from the one before (continue-as-new). */
const resumeSchema = z.object({
  startAfter: z.string().optional(),
  totals: totalsSchema,
  /** 1 for the first execution of a run. */
  execution: z.number().int().positive(),
  /** The first execution's name: the run's id, shared by its continuations. */
  run: z.string().min(1),
});

/** The state machine input (docs/operations.md). Unknown fields are errors: a typo never widens a backfill. */
export const backfillInputSchema = z.strictObject({
  table: z.string().min(1),
  /** Only keys under this prefix; must lie within the table's prefix. @default the table's prefix */
  prefix: z.string().optional(),
  /** Resume after this key (S3 StartAfter), e.g. the `lastKey` of a failed run. */
  startAfter: z.string().optional(),
  /** Only objects whose LastModified is at or after this time. */
  modifiedAfter: isoDate.optional(),
  /** Only objects whose LastModified is before this time. */
  modifiedBefore: isoDate.optional(),
  /** picomatch glob over the whole key, on top of the table's own filters. */
  glob: z.string().min(1).optional(),
  /** List, filter and check the ledger; enqueue nothing. */
  dryRun: z.boolean().default(false),
  /** Stop after listing this many objects. */
  maxObjects: z.number().int().positive().optional(),
  /**
   * `reconcile`: the scheduled repair for lost S3 events. The window is relative to the execution's start:
   * [start - lookbackSeconds, start - settleSeconds), so files whose events are still in flight are left out.
   */
  mode: z.enum(['backfill', 'reconcile']).default('backfill'),
  lookbackSeconds: z.number().int().positive().optional(),
  settleSeconds: z.number().int().nonnegative().optional(),
  /** Set by the state machine when it continues as a new execution; not for users. */
  resume: resumeSchema.optional(),
});
export type BackfillInput = z.input<typeof backfillInputSchema>;

/** The validated, resolved request: everything a step needs, carried in the execution's state. */
export interface BackfillPlan {
  readonly table: string;
  readonly bucket: string;
  readonly listPrefix: string;
  readonly modifiedAfter?: string;
  readonly modifiedBefore?: string;
  readonly glob?: string;
  readonly dryRun: boolean;
  readonly maxObjects?: number;
  readonly mode: 'backfill' | 'reconcile';
  /** The first execution's name. */
  readonly run: string;
  /** The input as given, for continuing as a new execution. */
  readonly input: Record<string, unknown>;
}

/** The state every step of the state machine passes on. Small: it travels in the execution history. */
export interface BackfillState {
  readonly plan: BackfillPlan;
  /** Last key fully processed: the next listing starts after it. */
  readonly startAfter?: string;
  readonly totals: BackfillTotals;
  /** Steps in this execution (continue-as-new bounds the history). */
  readonly steps: number;
  readonly execution: number;
  readonly next: 'step' | 'continue' | 'done';
  /** What the execution outputs when it ends here. */
  readonly summary: BackfillSummary;
  /** When `next` is `continue`: the continuation's name and input. */
  readonly continuation?: { readonly name: string; readonly input: Record<string, unknown> };
}

export interface BackfillSummary extends BackfillTotals {
  readonly table: string;
  readonly mode: 'backfill' | 'reconcile';
  readonly dryRun: boolean;
  readonly run: string;
  /** Executions this run has used so far (continue-as-new). */
  readonly executions: number;
  /** The last key processed: `startAfter` for a resumed run. */
  readonly lastKey: string | null;
  readonly complete: boolean;
}

export interface ExecutionInfo {
  readonly name: string;
  /** ISO-8601 */
  readonly startTime: string;
}

function issues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`);
}

/** Validates the state machine input against the pipeline's tables; every problem is reported at once. */
export function planBackfill(
  raw: unknown,
  config: PipelineConfig,
  landingBucket: string,
  execution: ExecutionInfo,
): { plan: BackfillPlan; resume?: z.infer<typeof resumeSchema> } {
  const parsed = backfillInputSchema.safeParse(raw ?? {});
  if (!parsed.success) throw new InvalidBackfillInput(issues(parsed.error));
  const input = parsed.data;
  const problems: string[] = [];
  const table: TableConfig | undefined = config.tables.find((t) => t.name === input.table);
  if (!table) {
    problems.push(
      `table: '${input.table}' is not configured; tables: ${config.tables.map((t) => t.name).join(', ')}`,
    );
  }
  const tablePrefix = table?.prefix ?? '';
  const listPrefix = input.prefix ?? tablePrefix;
  if (table && !listPrefix.startsWith(tablePrefix) && !tablePrefix.startsWith(listPrefix)) {
    problems.push(`prefix: '${listPrefix}' is outside table ${table.name}'s prefix '${tablePrefix}'`);
  }
  if (input.glob) {
    try {
      picomatch(input.glob);
    } catch (error) {
      problems.push(`glob: ${(error as Error).message}`);
    }
  }
  let { modifiedAfter, modifiedBefore } = input;
  if (input.mode === 'reconcile') {
    if (input.lookbackSeconds === undefined) problems.push('lookbackSeconds: required in reconcile mode');
    const start = Date.parse(execution.startTime);
    if (input.lookbackSeconds !== undefined)
      modifiedAfter = new Date(start - input.lookbackSeconds * 1000).toISOString();
    modifiedBefore = new Date(start - (input.settleSeconds ?? 900) * 1000).toISOString();
  } else if (input.lookbackSeconds !== undefined || input.settleSeconds !== undefined) {
    problems.push('lookbackSeconds/settleSeconds: only in reconcile mode; use modifiedAfter/modifiedBefore');
  }
  if (modifiedAfter && modifiedBefore && modifiedAfter >= modifiedBefore) {
    problems.push(`modifiedAfter (${modifiedAfter}) must be before modifiedBefore (${modifiedBefore})`);
  }
  if (problems.length > 0) throw new InvalidBackfillInput(problems);
  const { resume, ...given } = raw as Record<string, unknown>;
  return {
    plan: {
      table: input.table,
      bucket: table?.bucket ?? landingBucket,
      listPrefix: listPrefix.length >= tablePrefix.length ? listPrefix : tablePrefix,
      ...(modifiedAfter ? { modifiedAfter } : {}),
      ...(modifiedBefore ? { modifiedBefore } : {}),
      ...(input.glob ? { glob: input.glob } : {}),
      dryRun: input.dryRun,
      ...(input.maxObjects ? { maxObjects: input.maxObjects } : {}),
      mode: input.mode,
      run: input.resume?.run ?? execution.name,
      input: given,
    },
    ...(input.resume ? { resume: input.resume } : {}),
  };
}

import picomatch from 'picomatch';
import type { PipelineConfig, TableConfig } from '../config/pipeline-config.ts';
import { DEFAULTS } from '../kernel/defaults.ts';
import { InletError } from '../kernel/errors.ts';
import * as z from '../kernel/zod.ts';
import { issueLines } from '../kernel/zod.ts';
import { prefixesInWindow } from './key-time.ts';
import { type Partition, partitionSchema } from './partitions.ts';

/** The state machine input fails validation: the execution fails with this error name and the problems. */
export class InvalidBackfillInput extends InletError {
  constructor(readonly problems: readonly string[]) {
    super(`invalid backfill input:\n- ${problems.join('\n- ')}`, { retryable: false });
    this.name = 'InvalidBackfillInput';
  }
}

const isoDate = z.pipe(
  z
    .string()
    .check(
      z.refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO-8601 date or date-time, e.g. 2026-01-31'),
    ),
  z.transform((v: string) => new Date(v).toISOString()),
);

export const totalsSchema = z.object({
  /** Objects S3 listed (before any filter). */
  listed: z.int().check(z.nonnegative()),
  /** Listed objects that pass the time range, the glob and the table's own routing. */
  matched: z.int().check(z.nonnegative()),
  /** Matched files sent to the ingest queue (0 in a dry run). */
  enqueued: z.int().check(z.nonnegative()),
  /** Matched files the ledger already has a claim for: skipped. */
  alreadyIngested: z.int().check(z.nonnegative()),
  /** Dry run: what would have been enqueued. */
  wouldEnqueue: z.int().check(z.nonnegative()),
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
  /** The partitions not finished yet, each with its cursor. */
  pending: z.array(partitionSchema),
  /** How many partitions the run started with. */
  partitions: z.int().check(z.positive()),
  totals: totalsSchema,
  /** 1 for the first execution of a run. */
  execution: z.int().check(z.positive()),
  /** The first execution's name: the run's id, shared by its continuations. */
  run: z.string().check(z.minLength(1)),
});

/** The state machine input (docs/operations.md). Unknown fields are errors: a typo never widens a backfill. */
export const backfillInputSchema = z.strictObject({
  table: z.string().check(z.minLength(1)),
  /** Only keys under this prefix; must lie within the table's prefix. @default the table's prefix */
  prefix: z.optional(z.string()),
  /** Resume after this key (S3 StartAfter), e.g. the `lastKey` of a failed run. */
  startAfter: z.optional(z.string()),
  /** Only objects whose LastModified is at or after this time. */
  modifiedAfter: z.optional(isoDate),
  /** Only objects whose LastModified is before this time. */
  modifiedBefore: z.optional(isoDate),
  /** picomatch glob over the whole key, on top of the table's own filters. */
  glob: z.optional(z.string().check(z.minLength(1))),
  /** List, filter and check the ledger; enqueue nothing. */
  dryRun: z._default(z.boolean(), false),
  /** Stop after listing this many objects. */
  maxObjects: z.optional(z.int().check(z.positive())),
  /**
   * `reconcile`: the scheduled repair for lost S3 events. The window is relative to the execution's start:
   * [start - lookbackSeconds, start - settleSeconds), so files whose events are still in flight are left out.
   */
  mode: z._default(z.enum(['backfill', 'reconcile']), 'backfill'),
  lookbackSeconds: z.optional(z.int().check(z.positive())),
  settleSeconds: z.optional(z.int().check(z.nonnegative())),
  /**
   * Partitions run at once (the Map state's MaxConcurrency; an inline Map runs at most 40 iterations at
   * once). @default 16
   */
  concurrency: z._default(z.int().check(z.gte(1), z.lte(40)), 16),
  /**
   * Resume a failed run: the `resume.partitions` its failure output names, each with its own cursor.
   * Replaces partitioning by listing.
   */
  partitions: z.optional(z.array(partitionSchema).check(z.minLength(1))),
  /**
   * Read this S3 Inventory report (the manifest.json URL, s3://bucket/.../manifest.json) instead of listing
   * the bucket: for buckets of 100M+ objects. CSV reports only.
   */
  inventory: z.optional(
    z.string().check(z.regex(/^s3:\/\/[^/]+\/.+manifest\.json$/, 'must be s3://bucket/.../manifest.json')),
  ),
  /** Set by the state machine when it continues as a new execution; not for users. */
  resume: z.optional(resumeSchema),
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
  /** Partitions run at once. */
  readonly concurrency: number;
  /** S3 Inventory manifest to read instead of listing. */
  readonly inventory?: {
    readonly bucket: string;
    readonly key: string;
    /** The data files' columns (the manifest's fileSchema), read once by Plan. */
    readonly columns?: readonly string[];
  };
  /** Key prefixes the reconcile window can touch (tables with a key time pattern); else the whole prefix. */
  readonly windowPrefixes?: readonly string[];
  /** The first execution's name. */
  readonly run: string;
  /** The input as given, for continuing as a new execution. */
  readonly input: Record<string, unknown>;
}

/**
 * The state between rounds (Plan, Merge): the partitions still to do, each with its cursor. Small: it
 * travels in the execution history (256 KiB per state), which bounds the partition count.
 */
export interface BackfillState {
  readonly plan: BackfillPlan;
  /** Partitions not finished: the next round's Map items. */
  readonly pending: readonly Partition[];
  /** How many partitions the run started with. */
  readonly partitions: number;
  readonly totals: BackfillTotals;
  /** Steps each partition may take this round: bounds the execution's history (continue-as-new). */
  readonly stepsPerPartition: number;
  readonly execution: number;
  readonly next: 'round' | 'continue' | 'done' | 'failed';
  /** What the execution outputs when it ends here. */
  readonly summary: BackfillSummary;
  /** When `next` is `continue`: the continuation's name and input. */
  readonly continuation?: { readonly name: string; readonly input: Record<string, unknown> };
  /** When `next` is `failed`: the first partition failure, as Step Functions caught it. */
  readonly failure?: { readonly Error: string; readonly Cause: string };
  /** When `next` is `failed`: the execution's error and cause (JSON of the summary and the failure). */
  readonly failed?: { readonly error: string; readonly cause: string };
}

/** One partition's iteration of the Map: what each Step takes and returns. */
export interface PartitionTask {
  readonly plan: BackfillPlan;
  readonly partition: Partition;
  /** Counted this round. */
  readonly totals: BackfillTotals;
  readonly steps: number;
  readonly maxSteps: number;
  /** `end`: the partition is finished, or has had its steps this round. */
  readonly next: 'step' | 'end';
  readonly done: boolean;
}

/** What a Map iteration ends with; `failure` when its Step failed past its retries (Catch). */
export interface PartitionResult {
  readonly partition: Partition;
  readonly totals: BackfillTotals;
  readonly done: boolean;
  readonly failure?: { readonly Error: string; readonly Cause: string };
}

export interface BackfillSummary extends BackfillTotals {
  readonly table: string;
  readonly mode: 'backfill' | 'reconcile';
  readonly dryRun: boolean;
  readonly run: string;
  /** Executions this run has used so far (continue-as-new). */
  readonly executions: number;
  /** Partitions the run was split into, and how many are not finished. */
  readonly partitions: number;
  readonly pendingPartitions: number;
  /** One partition: its last key processed (`startAfter` for a resumed run); several: null, see `resume`. */
  readonly lastKey: string | null;
  /** Not complete: the input that resumes the run where each partition stopped. */
  readonly resume?: { readonly partitions: readonly Partition[] };
  /**
   * In a failure cause too long for its resume points (32,768 characters): they are in the output of the
   * execution's last Merge state (its history), where `inlet backfill status` reads them.
   */
  readonly resumeInHistory?: boolean;
  readonly complete: boolean;
}

export interface ExecutionInfo {
  readonly name: string;
  /** ISO-8601 */
  readonly startTime: string;
}

function issues(error: Parameters<typeof issueLines>[0]): string[] {
  return issueLines(error).map((line) => line.replace(/^\(root\):/, '(input):'));
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
    modifiedBefore = new Date(
      start - (input.settleSeconds ?? DEFAULTS.reconcileSettleMinutes * 60) * 1000,
    ).toISOString();
  } else if (input.lookbackSeconds !== undefined || input.settleSeconds !== undefined) {
    problems.push('lookbackSeconds/settleSeconds: only in reconcile mode; use modifiedAfter/modifiedBefore');
  }
  if (modifiedAfter && modifiedBefore && modifiedAfter >= modifiedBefore) {
    problems.push(`modifiedAfter (${modifiedAfter}) must be before modifiedBefore (${modifiedBefore})`);
  }
  if (input.inventory && (input.startAfter !== undefined || input.maxObjects !== undefined)) {
    problems.push('inventory: reads whole inventory files; startAfter and maxObjects do not apply');
  }
  // A resumed run's partitions are of its kind: data files of the report (cursor: the file and row), or
  // key ranges (cursor: the key).
  const inventoryKind = (p: Partition) =>
    p.report !== undefined && p.file !== undefined && p.fileEnd !== undefined;
  const listingKind = (p: Partition) =>
    p.report === undefined && p.file === undefined && p.fileEnd === undefined && p.row === undefined;
  const keyed = (p: Partition) =>
    [p.from, p.to, p.startAfter, p.versionIdMarker].some((v) => v !== undefined);
  if (input.inventory && input.partitions?.some((p) => !inventoryKind(p) || keyed(p)))
    problems.push(
      'partitions: an inventory run resumes with the partitions its failure names (report, file, fileEnd, row)',
    );
  if (!input.inventory && input.partitions?.some((p) => !listingKind(p)))
    problems.push('partitions: inventory partitions resume only with the inventory they came from');
  if (input.partitions && input.startAfter !== undefined) {
    problems.push('startAfter: give each partition its own startAfter instead');
  }
  const windowPrefixes =
    input.mode === 'reconcile' && table?.keyTime && modifiedAfter && modifiedBefore
      ? prefixesInWindow(table.keyTime, modifiedAfter, modifiedBefore)
      : undefined;
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
      concurrency: input.concurrency,
      ...(input.inventory ? { inventory: parseS3Url(input.inventory) } : {}),
      ...(windowPrefixes ? { windowPrefixes } : {}),
      run: input.resume?.run ?? execution.name,
      input: given,
    },
    ...(input.resume ? { resume: input.resume } : {}),
  };
}

function parseS3Url(url: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  return { bucket: match?.[1] ?? '', key: match?.[2] ?? '' };
}

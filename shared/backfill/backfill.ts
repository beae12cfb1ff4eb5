import picomatch from 'picomatch';
import type { PipelineConfig } from '../config/pipeline-config.ts';
import type { Ledger } from '../ingestion/ledger.ts';
import type { FileRef, ObjectRef } from '../ingestion/model.ts';
import { Router } from '../ingestion/routing.ts';
import type { Log } from '../kernel/log.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import { mapLimit } from './concurrency.ts';
import { identityColumnProblems } from './inventory-report.ts';
import { givenInventoryProblems, inventoryPartitions } from './inventory-source.ts';
import { pageSource } from './page-source.ts';
import { discoverRanges, type Partition } from './partitions.ts';
import type { Enqueuer, InventoryReader, ListedObject, ListPage, ObjectLister } from './ports.ts';
import {
  type BackfillPlan,
  type BackfillState,
  type BackfillTotals,
  type ExecutionInfo,
  InvalidBackfillInput,
  type PartitionResult,
  type PartitionTask,
  planBackfill,
  ZERO_TOTALS,
} from './request.ts';
import { fitPartitions, ROUND_BUDGET_BYTES, roundMaxBytes, STATE_LIMIT_BYTES } from './state-size.ts';
import { add, failedCause, summarize } from './summary.ts';

export interface BackfillDeps {
  readonly config: PipelineConfig;
  readonly landingBucket: string;
  readonly lister: ObjectLister;
  /** Reads S3 Inventory reports (`inventory` input); absent: such input is refused. */
  readonly inventory?: InventoryReader;
  readonly ledger: Ledger;
  readonly enqueuer: Enqueuer;
  readonly log: Log;
  readonly metrics: MetricsSink;
  /** epoch ms */
  readonly now: () => number;
  readonly limits: BackfillLimits;
}

/** S3 returns at most 1,000 keys per listing page. */
const MAX_PAGE_SIZE = 1000;
/** BatchGetItem takes 100 keys: a page's look-ups run this many at once. */
const LOOKUP_CONCURRENCY = 4;
/**
 * Partitions per unit of concurrency: more balance a slow one out, but each costs a partial page and a
 * Map iteration at least.
 */
const PARTITIONS_PER_SLOT = 2;
/**
 * The round's state travels in the execution history: no more partitions than this, and fewer when their
 * worst-case state would not fit (shared/backfill/state-size.ts).
 */
export const MAX_PARTITIONS = 256;

export interface BackfillLimits {
  /** Listing pages per step: one Lambda invocation. */
  readonly pagesPerStep: number;
  /**
   * Keys per listing page (S3 ListObjectsV2/ListObjectVersions MaxKeys, at most 1,000, which S3 also caps
   * it at). Smaller pages make shorter steps. @default 1000
   */
  readonly pageSize?: number;
  /** A step stops starting pages after this long (well inside the Lambda timeout). */
  readonly stepBudgetMs: number;
  /**
   * Steps per execution, over all partitions, before it continues as a new one. Each step adds ~7 history
   * events, so 1,000 steps stay far below Step Functions' 25,000-event limit even with retries.
   */
  readonly stepsPerExecution: number;
}

/**
 * Backfill, reprocess and reconcile (docs/operations.md): split the keys into partitions, list each in key
 * order (or read an S3 Inventory report), filter, skip what the ledger has, put the rest on the ingest queue
 * as S3-shaped records for one table. Partitions run in parallel (the state machine's Map). The batcher's
 * claim keeps exactly-once whatever overlaps (live events, another backfill, a retried step): this never
 * writes the ledger itself. Each task is a pure function of its input, so Step Functions may retry it.
 */
export class BackfillRun {
  private readonly router: Router;

  constructor(private readonly deps: BackfillDeps) {
    this.router = new Router(deps.config);
  }

  /** The first state: validates the input (InvalidBackfillInput lists every problem), then partitions. */
  async plan(input: unknown, execution: ExecutionInfo): Promise<BackfillState> {
    const planned = planBackfill(input, this.deps.config, this.deps.landingBucket, execution);
    const { resume } = planned;
    let { plan } = planned;
    const given = plan.input.partitions as Partition[] | undefined;
    let pending = resume?.pending;
    if (plan.inventory) {
      const manifest = await this.readReport(plan);
      plan = { ...plan, inventory: { ...plan.inventory, columns: manifest.columns } };
      const problems = given ? givenInventoryProblems(given, manifest) : [];
      if (problems.length > 0) throw new InvalidBackfillInput(problems);
      pending ??= given ?? inventoryPartitions(manifest, plan.listPrefix, this.target(plan));
    }
    pending ??= await this.partition(plan, given);
    // Read once: the partitions live on as `pending` (and in a continuation's `resume`), the window as them.
    const { partitions: _given, ...rest } = plan.input;
    const { windowPrefixes: _window, ...lean } = plan;
    plan = { ...lean, input: rest };
    const fitted = this.fit(plan, pending);
    if (fitted.length < pending.length)
      this.deps.log.warn('backfill partitions coalesced to fit the state machine state', {
        table: plan.table,
        from: pending.length,
        to: fitted.length,
      });
    const partitions = fitted.length < pending.length ? fitted.length : (resume?.partitions ?? fitted.length);
    const totals = resume?.totals ?? ZERO_TOTALS;
    const number = resume?.execution ?? 1;
    this.deps.log.info('backfill planned', { ...plan, execution: number, partitions: fitted.length });
    return this.round(plan, number, totals, partitions, fitted, 'round');
  }

  /** The report's manifest, checked, and the table's identity satisfied by its columns (F9). */
  private async readReport(plan: BackfillPlan) {
    const { inventory } = this.deps;
    if (!inventory || !plan.inventory)
      throw new Error('this backfill function reads no S3 Inventory reports');
    const manifest = await inventory.manifest(plan.inventory);
    const table = this.deps.config.tables.find((t) => t.name === plan.table);
    const problems = table ? identityColumnProblems(manifest.columns, table) : [];
    if (manifest.sourceBucket !== plan.bucket)
      problems.push(
        `inventory: the report lists bucket ${manifest.sourceBucket}; table ${plan.table} reads ${plan.bucket}`,
      );
    if (problems.length > 0) throw new InvalidBackfillInput(problems);
    return manifest;
  }

  private target(plan: BackfillPlan): number {
    return Math.min(MAX_PARTITIONS, plan.concurrency * PARTITIONS_PER_SLOT);
  }

  private async partition(plan: BackfillPlan, given: Partition[] | undefined): Promise<Partition[]> {
    if (given) return given;
    if (plan.windowPrefixes) return plan.windowPrefixes.map((prefix) => ({ prefix }));
    const startAfter = plan.input.startAfter as string | undefined;
    // A cursor or a cap is one sequence: one partition keeps their meaning.
    if (startAfter !== undefined || plan.maxObjects !== undefined)
      return [{ prefix: plan.listPrefix, ...(startAfter !== undefined ? { startAfter } : {}) }];
    return discoverRanges(this.deps.lister, {
      bucket: plan.bucket,
      prefix: plan.listPrefix,
      target: this.target(plan),
    });
  }

  /**
   * The partitions a round can hold: Step Functions refuses a state over 256 KiB, and the largest one,
   * Merge's input, grows with every partition's cursor and failure (state-size.ts). Too many are
   * coalesced, pair by pair.
   */
  private fit(plan: BackfillPlan, pending: readonly Partition[]): Partition[] {
    const versions = this.deps.config.tables.find((t) => t.name === plan.table)?.allowOverwrites === true;
    const bare = Buffer.byteLength(JSON.stringify(this.round(plan, 1, ZERO_TOTALS, 1, [], 'round')));
    return fitPartitions(
      pending,
      (ps) => ps.length <= MAX_PARTITIONS && roundMaxBytes(bare, ps, versions) <= ROUND_BUDGET_BYTES,
    );
  }

  private round(
    plan: BackfillPlan,
    execution: number,
    totals: BackfillTotals,
    partitions: number,
    pending: readonly Partition[],
    next: BackfillState['next'],
  ): BackfillState {
    const stepsPerPartition = Math.max(
      1,
      Math.floor(this.deps.limits.stepsPerExecution / Math.max(1, pending.length)),
    );
    return {
      plan,
      pending,
      partitions,
      totals,
      stepsPerPartition,
      execution,
      next: pending.length === 0 ? 'done' : next,
      summary: summarize(plan, execution, totals, partitions, pending),
    };
  }

  /** A Map iteration's first input (the state machine's ItemSelector builds the same). */
  static task(state: BackfillState, partition: Partition): PartitionTask {
    return {
      plan: state.plan,
      partition,
      totals: ZERO_TOTALS,
      steps: 0,
      maxSteps: state.stepsPerPartition,
      next: 'step',
      done: false,
    };
  }

  /** One partition's step: up to `pagesPerStep` pages from its cursor; listing runs a page ahead. */
  async step(task: PartitionTask): Promise<PartitionTask> {
    const { plan } = task;
    const { limits } = this.deps;
    const deadline = this.deps.now() + limits.stepBudgetMs;
    let partition = task.partition;
    let totals = task.totals;
    let stepTotals = ZERO_TOTALS;
    let done = false;
    const versions = this.deps.config.tables.find((t) => t.name === plan.table)?.allowOverwrites === true;
    const source = pageSource(this.deps, plan, partition, versions);
    let ahead: Promise<ListPage> | undefined = source.read(partition, this.pageLimit(plan, totals));
    for (let page = 0; ahead; page++) {
      const listed = await ahead;
      ahead = undefined;
      const objects = source.own(partition, listed);
      const ended = source.ended(partition, listed);
      const cursor = source.advance(partition, listed);
      const limit = this.pageLimit(plan, add(totals, { ...ZERO_TOTALS, listed: objects.length }));
      if (!ended && limit > 0 && page + 1 < limits.pagesPerStep && this.deps.now() < deadline) {
        ahead = source.read(cursor, limit);
        // Awaited next turn; a failure of this page first must not leave it unhandled.
        ahead.catch(() => {});
      }
      const counts = await this.process(plan, objects);
      totals = add(totals, counts);
      stepTotals = add(stepTotals, counts);
      partition = cursor;
      if (ended || limit <= 0) {
        done = true;
        ahead = undefined;
      }
    }
    this.record(plan, stepTotals);
    const steps = task.steps + 1;
    return {
      ...task,
      partition,
      totals,
      steps,
      done,
      next: done || steps >= task.maxSteps ? 'end' : 'step',
    };
  }

  /** Keys the next page may list: a page, or what is left of `maxObjects` (one partition then). */
  private pageLimit(plan: BackfillPlan, totals: BackfillTotals): number {
    const pageSize = Math.min(MAX_PAGE_SIZE, this.deps.limits.pageSize ?? MAX_PAGE_SIZE);
    return plan.maxObjects === undefined ? pageSize : Math.min(pageSize, plan.maxObjects - totals.listed);
  }

  /** Filter, route, look the ledger up, enqueue what it has not seen. */
  private async process(plan: BackfillPlan, objects: readonly ListedObject[]): Promise<BackfillTotals> {
    const glob = plan.glob ? picomatch(plan.glob, { dot: true }) : undefined;
    const files: FileRef[] = [];
    for (const object of objects) {
      if (plan.modifiedAfter && object.lastModified < plan.modifiedAfter) continue;
      if (plan.modifiedBefore && object.lastModified >= plan.modifiedBefore) continue;
      if (glob && !glob(object.key)) continue;
      const ref: ObjectRef = {
        bucket: plan.bucket,
        key: object.key,
        size: object.size,
        eTag: object.eTag,
        versionId: object.versionId,
        sequencer: null,
        eventTime: object.lastModified,
        target: plan.table,
      };
      const routed = this.router.route(ref);
      if (routed.kind === 'routed') files.push(...routed.files);
    }
    const chunks: string[][] = [];
    for (let i = 0; i < files.length; i += 100) chunks.push(files.slice(i, i + 100).map((f) => f.identity));
    const known = new Set(
      (
        await mapLimit(chunks, LOOKUP_CONCURRENCY, (ids) => this.deps.ledger.knownIdentities(plan.table, ids))
      ).flatMap((set) => [...set]),
    );
    const fresh = files.filter((f) => !known.has(f.identity));
    if (!plan.dryRun && fresh.length > 0) {
      await this.deps.enqueuer.enqueue(
        fresh.map(({ table: _t, identity: _i, ...object }) => object),
        { table: plan.table, run: plan.run },
      );
    }
    return {
      listed: objects.length,
      matched: files.length,
      alreadyIngested: files.length - fresh.length,
      enqueued: plan.dryRun ? 0 : fresh.length,
      wouldEnqueue: plan.dryRun ? fresh.length : 0,
    };
  }

  /**
   * After a round: adds up the partitions, then done, failed (with each resume point) or continue. Each
   * output holds the cursors as few times as it needs: a continuation's only in its input, a failure's in
   * its summary, and its failure cause (the execution's, at most 32,768 characters) as many as fit.
   */
  merge(state: BackfillState, results: readonly PartitionResult[]): BackfillState {
    const { plan } = state;
    const totals = results.reduce((sum, r) => add(sum, r.totals), state.totals);
    const failure = results.find((r) => r.failure)?.failure;
    const output = (pending: readonly Partition[]): BackfillState => {
      const base = this.round(plan, state.execution, totals, state.partitions, pending, 'continue');
      if (failure) return { ...base, next: 'failed', failure, failed: failedCause(base.summary, failure) };
      if (base.next === 'done') return base;
      const execution = state.execution + 1;
      const { resume: _, ...summary } = base.summary;
      return {
        ...base,
        pending: [],
        summary,
        continuation: {
          name: continuationName(plan.run, execution),
          input: {
            ...plan.input,
            resume: { pending, partitions: state.partitions, totals, execution, run: plan.run },
          },
        },
      };
    };
    let pending = results.filter((r) => !r.done).map((r) => r.partition);
    let next = output(pending);
    // The round was sized for its worst case; should the cursors still not fit (keys of characters JSON
    // escapes), fewer, wider partitions carry the run on rather than a state Step Functions refuses.
    const fits = (o: BackfillState) => Buffer.byteLength(JSON.stringify(o)) <= STATE_LIMIT_BYTES - 8 * 1024;
    if (!fits(next)) {
      pending = fitPartitions(pending, (ps) => fits(output(ps)));
      next = output(pending);
    }
    if (failure) this.deps.log.error('backfill partition failed', { ...next.summary, error: failure.Error });
    else if (next.next === 'done') this.deps.log.info('backfill complete', { ...next.summary });
    return next;
  }

  private record(plan: BackfillPlan, counts: BackfillTotals): void {
    const m = this.deps.metrics;
    const reconcile = plan.mode === 'reconcile';
    m.count(reconcile ? METRIC.reconcileListed : METRIC.backfillListed, counts.listed);
    m.count(reconcile ? METRIC.reconcileMissing : METRIC.backfillEnqueued, counts.enqueued);
    if (!reconcile) m.count(METRIC.backfillAlreadyIngested, counts.alreadyIngested);
    if (reconcile && counts.enqueued > 0) {
      this.deps.log.warn('reconcile found files the ledger never saw (lost S3 events?); enqueued them', {
        table: plan.table,
        missing: counts.enqueued,
      });
    }
  }
}

/** Execution names are 1-80 chars; a run's continuations share its name with a counter. */
export function continuationName(run: string, execution: number): string {
  const suffix = `-c${execution}`;
  const base = run.replace(/-c\d+$/, '');
  return `${base.slice(0, 80 - suffix.length)}${suffix}`;
}

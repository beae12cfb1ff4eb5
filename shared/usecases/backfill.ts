import picomatch from 'picomatch';
import {
  type BackfillPlan,
  type BackfillState,
  type BackfillSummary,
  type BackfillTotals,
  type ExecutionInfo,
  planBackfill,
  ZERO_TOTALS,
} from '../backfill/request.ts';
import type { ObjectLister } from '../backfill/s3-lister.ts';
import type { Enqueuer } from '../backfill/sqs-enqueuer.ts';
import type { PipelineConfig } from '../config.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';
import { METRIC, type MetricsSink } from '../metrics.ts';
import type { FileRef, ObjectRef } from '../model.ts';
import { Router } from '../routing.ts';

export interface BackfillDeps {
  readonly config: PipelineConfig;
  readonly landingBucket: string;
  readonly lister: ObjectLister;
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
   * Steps per execution before it continues as a new one. Each step adds ~7 history events, so 1,000 steps
   * stay far below Step Functions' 25,000-event limit even with retries.
   */
  readonly stepsPerExecution: number;
}

function summarize(state: Omit<BackfillState, 'summary' | 'next'>, complete: boolean): BackfillSummary {
  return {
    table: state.plan.table,
    mode: state.plan.mode,
    dryRun: state.plan.dryRun,
    run: state.plan.run,
    executions: state.execution,
    ...state.totals,
    lastKey: state.startAfter ?? null,
    complete,
  };
}

/**
 * Backfill, reprocess and reconcile (docs/operations.md): list the bucket in key order, filter, skip what
 * the ledger has, put the rest on the ingest queue as S3-shaped records for one table. The batcher's claim
 * keeps exactly-once whatever overlaps (live events, another backfill, a retried step): this never writes
 * the ledger itself. Each step is a pure function of its input state, so Step Functions may retry it.
 */
export class BackfillRun {
  private readonly router: Router;

  constructor(private readonly deps: BackfillDeps) {
    this.router = new Router(deps.config);
  }

  /** The first state: validates the input (InvalidBackfillInput lists every problem). */
  plan(input: unknown, execution: ExecutionInfo): BackfillState {
    const { plan, resume } = planBackfill(input, this.deps.config, this.deps.landingBucket, execution);
    const initial = {
      plan,
      startAfter: resume?.startAfter ?? (plan.input.startAfter as string | undefined),
      totals: resume?.totals ?? ZERO_TOTALS,
      steps: 0,
      execution: resume?.execution ?? 1,
    };
    this.deps.log.info('backfill planned', { ...plan, execution: initial.execution });
    return { ...initial, next: 'step', summary: summarize(initial, false) };
  }

  /** Lists up to `pagesPerStep` pages from the cursor, enqueues what the ledger has not seen. */
  async step(state: BackfillState): Promise<BackfillState> {
    const { plan } = state;
    const { limits } = this.deps;
    const deadline = this.deps.now() + limits.stepBudgetMs;
    const table = this.deps.config.tables.find((t) => t.name === plan.table);
    const glob = plan.glob ? picomatch(plan.glob, { dot: true }) : undefined;
    const totals: BackfillTotals = { ...state.totals };
    const stepTotals: BackfillTotals = { ...ZERO_TOTALS };
    let startAfter = state.startAfter;
    let exhausted = false;
    for (let page = 0; page < limits.pagesPerStep && this.deps.now() < deadline; page++) {
      const pageSize = Math.min(MAX_PAGE_SIZE, limits.pageSize ?? MAX_PAGE_SIZE);
      const remaining = plan.maxObjects === undefined ? pageSize : plan.maxObjects - totals.listed;
      if (remaining <= 0) {
        exhausted = true;
        break;
      }
      const listed = await this.deps.lister.list({
        bucket: plan.bucket,
        prefix: plan.listPrefix,
        startAfter,
        limit: Math.min(pageSize, remaining),
        versions: table?.allowOverwrites === true,
      });
      const files: FileRef[] = [];
      for (const object of listed.objects) {
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
      const known = await this.deps.ledger.knownIdentities(
        plan.table,
        files.map((f) => f.identity),
      );
      const fresh = files.filter((f) => !known.has(f.identity));
      if (!plan.dryRun && fresh.length > 0) {
        await this.deps.enqueuer.enqueue(
          fresh.map(({ table: _t, identity: _i, ...object }) => object),
          { table: plan.table, run: plan.run },
        );
      }
      const counts = {
        listed: listed.objects.length,
        matched: files.length,
        alreadyIngested: files.length - fresh.length,
        enqueued: plan.dryRun ? 0 : fresh.length,
        wouldEnqueue: plan.dryRun ? fresh.length : 0,
      };
      for (const key of Object.keys(counts) as Array<keyof BackfillTotals>) {
        totals[key] += counts[key];
        stepTotals[key] += counts[key];
      }
      startAfter = listed.lastKey ?? startAfter;
      if (!listed.more) {
        exhausted = true;
        break;
      }
    }
    this.record(plan, stepTotals);
    const steps = state.steps + 1;
    const base = { plan, startAfter, totals, steps, execution: state.execution };
    if (exhausted) {
      this.deps.log.info('backfill complete', { ...summarize(base, true) });
      return { ...base, next: 'done', summary: summarize(base, true) };
    }
    if (steps >= limits.stepsPerExecution) {
      const execution = state.execution + 1;
      return {
        ...base,
        next: 'continue',
        summary: summarize(base, false),
        continuation: {
          name: continuationName(plan.run, execution),
          input: {
            ...plan.input,
            resume: { startAfter, totals, execution, run: plan.run },
          },
        },
      };
    }
    return { ...base, next: 'step', summary: summarize(base, false) };
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

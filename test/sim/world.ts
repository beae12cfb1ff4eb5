/**
 * One simulated deployment: the fake AWS services, the pipeline's configuration and the Lambda timings
 * (the defaults of infra/, divided by 10 so a seed covers many visibility timeouts in few steps; the
 * ratios the protocol depends on are kept: lease 2x the batcher timeout, visibility 6x each timeout).
 */
import { bronzeLocation } from '../../shared/bronze/config.ts';
import type { FileClaims, LandingCleaner, SinkCursorStore } from '../../shared/bronze/ports.ts';
import { DEFAULT_PART_LIMITS, type PartLimits } from '../../shared/bronze/write-version.ts';
import { type PipelineConfig, parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../../shared/kernel/defaults.ts';
import type { Log } from '../../shared/kernel/log.ts';
import type { MetricsSink } from '../../shared/kernel/metrics.ts';
import { SimDeltaStore, SimSinkCursors, SimSinkNudger, SimSourceObjects } from './fakes/bronze.ts';
import { DynamoTable } from './fakes/dynamo.ts';
import { type Removal, SimFileClaims, SimLandingCleaner } from './fakes/landing.ts';
import type { Classify, SimLedger } from './fakes/ledger.ts';
import { simPorts } from './fakes/ports.ts';
import { S3Bucket } from './fakes/s3.ts';
import { EventBus, SqsQueue } from './fakes/sqs.ts';
import { SimSymlinkManifests } from './fakes/symlink-manifests.ts';
import { SimTableFiles, type SimTableFilesCtx } from './fakes/table-files.ts';
import { Aws, type FaultRates, NO_FAULTS } from './faults.ts';
import { Rng, Scheduler, type Worker } from './scheduler.ts';

export const TIMING = {
  leaseSeconds: 60,
  batcherTimeoutMs: 30_000,
  committerTimeoutMs: 6_000,
  ingestVisibilityMs: 180_000,
  commitVisibilityMs: 36_000,
  sweepEveryMs: 30_000,
  staleAfterMs: 30_000,
  maxReceiveCount: 10,
  /** The sink's 15 minutes / 10; its handler still keeps 60 s back, so a run has 30 s of budget. */
  sinkTimeoutMs: 90_000,
  sinkVisibilityMs: 540_000,
  /** The bronze tables' nudge schedule: 15 minutes / 10. */
  sinkNudgeEveryMs: 90_000,
  /** The sink's visibility lease (DEFAULTS.sink.leaseSeconds / 10), extended every third of it. */
  sinkLeaseMs: DEFAULTS.sink.leaseSeconds * 100,
} as const;

/**
 * How the sink's visibility lease beats in a seed: `held`, under SQS's faults only; `flaky`, half its calls
 * never reach SQS; `lost`, none does (the queue's own visibility applies, as without a lease).
 */
export type SinkHeartbeat = 'held' | 'flaky' | 'lost';

export const MANIFEST_BUCKET = 'manifests';

/**
 * A slow seed's landing read (a big file streamed): under the 15 s the handler keeps between abandoning a
 * part and the Lambda timeout, so a read started just before a part is abandoned still ends inside the run.
 */
const SLOW_LANDING_MS = 12_000;

/** The Delta tables' roots (`<prefix>` in the manifest bucket), one per bronze table. */
export function bronzePrefixes(
  config: PipelineConfig,
): Array<{ readonly table: string; readonly prefix: string }> {
  return config.tables.flatMap((t) =>
    t.bronze ? [{ table: t.name, prefix: bronzeLocation(t.name, t.bronze, MANIFEST_BUCKET).prefix }] : [],
  );
}

/**
 * `orders/...` files belong to two tables: one event, two claims, two manifests. `orders` is also written
 * to a Delta table (the bronze sink), with a checkpoint every 3 versions so seeds cross checkpoints.
 */
export const CONFIG: PipelineConfig = parsePipelineConfig({
  tables: [
    { name: 'orders', prefix: 'orders/', bronze: { format: 'json', checkpointInterval: 3 } },
    { name: 'everything', prefix: '' },
  ],
  leaseSeconds: TIMING.leaseSeconds,
  claimConcurrency: 4,
});

/**
 * The optimize scenario's even seeds: the same, with symlink manifests the sink writes after its commits and
 * the vacuum worker before it deletes (docs/bronze.md, "Symlink manifests").
 */
export const OPTIMIZE_CONFIG: PipelineConfig = parsePipelineConfig({
  ...CONFIG,
  tables: [
    {
      name: 'orders',
      prefix: 'orders/',
      bronze: { format: 'json', checkpointInterval: 3, symlinkManifest: true },
    },
    { name: 'everything', prefix: '' },
  ],
});

/**
 * The optimize scenario's odd seeds: with `orders` partitioned by `n` (0-3, or null where it was rescued), so
 * optimize bins within each partition beside a sink writing one file per partition a version, and each
 * partition has a symlink manifest of its own.
 */
export const PARTITIONED_CONFIG: PipelineConfig = parsePipelineConfig({
  ...CONFIG,
  tables: [
    {
      name: 'orders',
      prefix: 'orders/',
      bronze: {
        format: 'json',
        checkpointInterval: 3,
        schemaHints: { n: 'long' },
        partitionBy: ['n'],
        symlinkManifest: true,
      },
    },
    { name: 'everything', prefix: '' },
  ],
});

/**
 * The cleanSource scenario (`--scenario clean`): two bronze tables over one prefix, both moving their
 * landing files to an archive once their versions are in the Delta table (retention 0, so within a seed);
 * each file is removed only once the other table holds it too, and only if the key still holds the write
 * read. `logs/...` files go to a table of their own (a table without a Delta table may not share a
 * cleanSource table's keys).
 */
export const CLEAN_CONFIG: PipelineConfig = parsePipelineConfig({
  tables: [
    {
      name: 'orders',
      prefix: 'orders/',
      bronze: {
        format: 'json',
        checkpointInterval: 3,
        cleanSource: { action: 'move', moveTo: 's3://archive/orders', retentionDays: 0 },
      },
    },
    {
      name: 'audit',
      prefix: 'orders/',
      bronze: {
        format: 'json',
        cleanSource: { action: 'move', moveTo: 's3://archive/audit', retentionDays: 0 },
      },
    },
    { name: 'logs', prefix: 'logs/' },
  ],
  leaseSeconds: TIMING.leaseSeconds,
  claimConcurrency: 4,
});

/**
 * `optimize`: the plain pipeline, plus two optimize workers compacting the bronze table at once (each other's
 * rivals, and the sink's) and a vacuum deleting what no version within `VACUUM_RETENTION_MS` names.
 */
export type Scenario = 'plain' | 'clean' | 'optimize';

/** Bins of a few of the simulation's data files (1-3 KB each), so most runs rewrite several bins. */
export const OPTIMIZE_TARGET_BYTES = 8_000;
/**
 * The simulation's vacuum retention: longer than any writer's upload-to-commit time (the sink's 90 s
 * timeout, optimize's 60 s), as the product's one-day floor is longer than a 15-minute invocation.
 */
export const VACUUM_RETENTION_MS = 120_000;

export const FAULTS: FaultRates = {
  appliedLost: 0.04,
  refused5xx: 0.03,
  throttled: 0.04,
  slow: 0.02,
  burst: 0.6,
  storms: 0.08,
};

/** What a broken variant changes; everything else is the product's own code. */
export interface Plumbing {
  readonly classify?: Classify;
  readonly ledger?: (ctx: ConstructorParameters<typeof SimLedger>[0]) => SimLedger;
  /** The sink's Delta store, given the worker's cursor store (a variant may break how it commits). */
  readonly delta?: (
    ctx: ConstructorParameters<typeof SimDeltaStore>[0] & { readonly cursors: SinkCursorStore },
  ) => SimDeltaStore;
  /** The sink's cursor store, over the simulation's (a variant may drop what the sink records on it). */
  readonly cursors?: (cursors: SimSinkCursors) => SinkCursorStore;
  /** The id in every data file name of an attempt at a part (a variant may reuse one). */
  readonly attemptId?: (unique: string) => string;
  /** No schedule nudges the bronze tables: a lost last trigger leaves a table behind for good. */
  readonly noSinkSchedule?: boolean;
  /** Force (or forbid) another Delta writer on the bronze table; otherwise half the seeds have one. */
  readonly foreignWriter?: boolean;
  /** cleanSource's S3 calls (a variant may drop their conditions). */
  readonly cleaner?: (ctx: ConstructorParameters<typeof SimLandingCleaner>[0]) => LandingCleaner;
  /** The other tables' claims as cleanSource reads them (a variant may not wait for them). */
  readonly claims?: (ctx: ConstructorParameters<typeof SimFileClaims>[0]) => FileClaims;
  /**
   * Force how the sink's heartbeat fares; `flaky` and `lost` also give the sink queue a 2-second visibility,
   * so a lapsed lease lets a second sink run the table. Otherwise the seed decides (half overlap).
   */
  readonly sinkHeartbeat?: SinkHeartbeat;
  /** Optimize's and vacuum's view of the table's data files (a variant may misreport their age). */
  readonly tableFiles?: (ctx: SimTableFilesCtx) => SimTableFiles;
  /** Optimize's Delta store (a variant may hide other writers' removes from it). */
  readonly optimizeDelta?: (ctx: ConstructorParameters<typeof SimDeltaStore>[0]) => SimDeltaStore;
  /** Vacuum without first bringing the symlink manifests to the head (a variant). */
  readonly vacuumBeforeManifests?: boolean;
}

export class World {
  readonly rng: Rng;
  readonly scheduler: Scheduler;
  readonly aws: Aws;
  readonly db: DynamoTable;
  readonly bucket: S3Bucket;
  /** The landing bucket's objects, which the sink reads (the rest of the pipeline only sees their events). */
  readonly landing: S3Bucket;
  /** cleanSource's `moveTo` bucket, and every write it removed from the landing bucket. */
  readonly archive: S3Bucket;
  readonly removals: Removal[] = [];
  readonly config: PipelineConfig;
  readonly ingest: SqsQueue;
  readonly commits: SqsQueue;
  /** The sink's FIFO queue, group = table, fed by a rule on BatchCommitted per bronze table. */
  readonly sinkQueue: SqsQueue;
  readonly bus: EventBus;
  faultsOn = true;
  readonly sinkTimeoutMs: number;
  /** When a bronze table's last BatchCommitted reached the rule, and the schedule last fired. */
  lastBronzeEventAt = Number.NEGATIVE_INFINITY;
  /** The schedule's first firing is one period after the deployment. */
  lastNudgeAt = 0;
  /** Schedule firings since a sink or clean cursor last moved (the clean scenario's quiet needs two). */
  private nudgesSinceProgress = 0;
  private cursors = '';
  /** Rule deliveries to the sink queue that failed (to the rule's DLQ in AWS, which nothing redrives). */
  lostTriggers = 0;
  /** The last bronze event's delivery failed: only a nudge can bring the table up to date. */
  lastTriggerLost = false;
  crashRate = 0.004;
  /**
   * How the sink cuts versions into parts in this seed: often one file or a few per part (so versions are
   * written in parts across runs and crashes), sometimes by bytes (the manifest sizes are up to 5,000, the
   * files held or streamed), sometimes whole; reads one or four at a time.
   */
  readonly sinkParts: PartLimits;
  /** Each landing read takes this much longer in this seed (`SLOW_LANDING_MS`, a big file streamed). */
  readonly slowLandingMs: number;
  /**
   * Actions per checkpoint row group in this seed: 2 in half the seeds, so checkpoints are written and
   * read back a row group at a time (each streamed into the next); the product's default in the others.
   */
  readonly checkpointRows: number | undefined;
  /** Another Delta writer (compactions, table properties, logged VACUUMs) works on the bronze table. */
  readonly foreignWriter: boolean;
  /** Its choices: a stream of their own. */
  readonly foreignRng: Rng;
  /** How the sink's visibility lease fares in this seed. */
  readonly sinkHeartbeat: SinkHeartbeat;
  /** Which beats are lost (`flaky`): a stream of its own. */
  private readonly heartbeatRng: Rng;
  /** The tables each sink invocation now running holds (its messages' groups). */
  readonly sinkRuns = new Map<Worker, ReadonlySet<string>>();
  /** Sink invocations that started on a table another live invocation still held. */
  sinkOverlaps = 0;
  /** Writes that lowered a symlink manifest's recorded Delta version (SL1), as the fake saw them. */
  readonly manifestRegressions: string[] = [];
  private batchSeq = 0;
  private attempts = 0;

  constructor(
    readonly seed: number,
    readonly plumbing: Plumbing = {},
    readonly scenario: Scenario = 'plain',
  ) {
    this.config =
      scenario === 'clean'
        ? CLEAN_CONFIG
        : scenario === 'optimize'
          ? seed % 2 === 1
            ? PARTITIONED_CONFIG
            : OPTIMIZE_CONFIG
          : CONFIG;
    this.rng = new Rng(seed);
    this.scheduler = new Scheduler(this.rng);
    // Some seeds have a slow ledger: calls that take seconds widen every race window.
    this.aws = new Aws(this.scheduler, this.rng, { ...FAULTS, slow: this.rng.pick([0.02, 0.02, 0.15]) });
    this.db = new DynamoTable(this.scheduler);
    this.bucket = new S3Bucket(this.scheduler);
    this.ingest = new SqsQueue('ingest', this.scheduler, this.rng, {
      fifo: false,
      visibilityMs: TIMING.ingestVisibilityMs,
      maxReceiveCount: TIMING.maxReceiveCount,
      duplicateRate: 0.05,
    });
    // Some seeds run committers longer than the commit queue's visibility timeout (a committer timeout
    // raised without the queue's), so two committers hold one table's group at once: CommitBatch says it
    // is safe then too. Receive counts mean nothing there, so such seeds do not dead-letter.
    const overlap = this.rng.chance(0.5);
    this.commits = new SqsQueue('commit', this.scheduler, this.rng, {
      fifo: true,
      visibilityMs: overlap ? 1_000 : TIMING.commitVisibilityMs,
      maxReceiveCount: overlap ? Number.POSITIVE_INFINITY : TIMING.maxReceiveCount,
      duplicateRate: 0,
    });
    // As with the commit queue: some seeds redeliver a table's sink message while a run still holds it,
    // so two sinks write one table at once (the If-None-Match log entry must keep it exactly once). Since the
    // sink holds its messages with a lease, that takes its heartbeat failing: lost or flaky in those seeds.
    const sinkOverlap = plumbing.sinkHeartbeat ? plumbing.sinkHeartbeat !== 'held' : this.rng.chance(0.5);
    this.heartbeatRng = new Rng((seed * 6_271 + 53) >>> 0);
    this.sinkHeartbeat =
      plumbing.sinkHeartbeat ?? (sinkOverlap ? this.heartbeatRng.pick(['flaky', 'lost'] as const) : 'held');
    // A third of the seeds give the sink a timeout just over the 60 s its handler keeps back: a run's budget
    // is 1.5 s, so a backlog is written over several runs, each nudging the next on the sink queue.
    const shortTimeout = this.rng.chance(1 / 3);
    this.sinkQueue = new SqsQueue('sink', this.scheduler, this.rng, {
      fifo: true,
      visibilityMs: sinkOverlap ? 2_000 : TIMING.sinkVisibilityMs,
      maxReceiveCount: sinkOverlap ? Number.POSITIVE_INFINITY : TIMING.maxReceiveCount,
      duplicateRate: 0,
    });
    this.landing = new S3Bucket(this.scheduler);
    // Their own stream, as the trigger's below: drawing from the world's would reshuffle recorded seeds.
    const bronzeRng = new Rng((seed * 104_729 + 31) >>> 0);
    const parts = {
      maxFiles: bronzeRng.pick([1, 2, 3, DEFAULT_PART_LIMITS.maxFiles]),
      maxBytes: bronzeRng.pick([4_000, 12_000, DEFAULT_PART_LIMITS.maxBytes]),
      concurrency: bronzeRng.pick([1, 4]),
    };
    this.slowLandingMs = bronzeRng.pick([0, 0, 0, SLOW_LANDING_MS]);
    // Slow seeds plan whole versions, read one file at a time, in a 35-second function: a part is abandoned
    // 20 s in (15 s before the timeout), so a version of two files or more outlasts a run and only parts
    // shrunk to one file (the cursor's `partFiles`) get it written.
    this.sinkParts = this.slowLandingMs > 0 ? { ...DEFAULT_PART_LIMITS, concurrency: 1 } : parts;
    this.sinkTimeoutMs = this.slowLandingMs > 0 ? 35_000 : shortTimeout ? 61_500 : TIMING.sinkTimeoutMs;
    this.foreignWriter = plumbing.foreignWriter ?? bronzeRng.chance(0.5);
    this.checkpointRows = bronzeRng.pick([2, undefined]);
    this.foreignRng = new Rng((seed * 7_727 + 101) >>> 0);
    this.archive = new S3Bucket(this.scheduler);
    const bronzeTables = new Set(this.config.tables.filter((t) => t.bronze).map((t) => t.name));
    // Its own stream: drawing from the world's would reshuffle every seed recorded before it existed.
    const triggerRng = new Rng((seed * 7919 + 17) >>> 0);
    this.bus = new EventBus(
      () => (this.faultsOn ? 0.1 : 0),
      this.rng,
      (event) => {
        if (!bronzeTables.has(event.table)) return;
        this.lastBronzeEventAt = this.scheduler.now;
        // The rule's delivery to the queue can fail after its retries (the rule's DLQ in AWS).
        this.lastTriggerLost = this.faultsOn && triggerRng.chance(0.2);
        if (this.lastTriggerLost) {
          this.lostTriggers += 1;
          this.scheduler.log(`rule lost the sink trigger for ${event.table} v${event.version}`);
          return;
        }
        // The rule's target: one message per event (events differ in id, so content dedup drops none).
        this.sinkQueue.send(JSON.stringify({ detail: { table: event.table } }), event.table);
      },
    );
    this.scheduler.crashes = (worker) =>
      this.faultsOn && Number.isFinite(worker.deadline) && this.rng.chance(this.crashRate);
  }

  /**
   * EventBridge Scheduler's nudge of every bronze table (infra/bronze.ts), when it is due: the body carries the
   * scheduled time, so content-based deduplication keeps each firing.
   */
  nudgeIfDue(): void {
    if (this.scenario === 'clean') {
      const cursors = this.sinkCursors();
      if (cursors !== this.cursors) this.nudgesSinceProgress = 0;
      this.cursors = cursors;
    }
    if (this.plumbing.noSinkSchedule) return;
    if (this.scheduler.now < this.lastNudgeAt + TIMING.sinkNudgeEveryMs) return;
    this.lastNudgeAt = this.scheduler.now;
    // Counted once faults stop: under them a run with a 1.5 s budget may spend it all before its clean.
    if (!this.faultsOn) this.nudgesSinceProgress += 1;
    for (const table of this.config.tables.filter((t) => t.bronze).map((t) => t.name)) {
      const body = JSON.stringify({ table, scheduledAt: new Date(this.scheduler.now).toISOString() });
      this.sinkQueue.send(body, table, body);
    }
  }

  /**
   * Every bronze table has had a chance to catch up since its last trigger: a nudge came after it. With
   * cleanSource, also two nudges after the faults stopped and since any sink or clean cursor last moved: a
   * table's clean waits for the other table's Delta table, which may only catch up in a later run.
   */
  nudgedSinceLastTrigger(): boolean {
    if (this.plumbing.noSinkSchedule === true) return true;
    if (this.scenario === 'clean' && this.nudgesSinceProgress < 2) return false;
    return this.lastNudgeAt > this.lastBronzeEventAt;
  }

  /** Where every bronze table's sink and clean cursors stand, read from the ledger as it is. */
  private sinkCursors(): string {
    return this.config.tables
      .filter((t) => t.bronze)
      .map((t) => {
        const sink = this.db.get({ pk: `SINK#${t.name}`, sk: 'S' })?.deltaVersion;
        const clean = this.db.get({ pk: `SINK#${t.name}`, sk: 'C' })?.cleanedVersion;
        return `${t.name}:${sink}:${clean}`;
      })
      .join(',');
  }

  /** Whether this call of the sink's heartbeat never reaches SQS. */
  heartbeatLost(): boolean {
    if (this.sinkHeartbeat === 'lost') return true;
    return this.sinkHeartbeat === 'flaky' && this.heartbeatRng.chance(0.5);
  }

  stopFaults(): void {
    this.faultsOn = false;
    this.aws.rates = NO_FAULTS;
  }

  newBatchId = (): string => `B${String(++this.batchSeq).padStart(4, '0')}`;

  /** The ports as one worker's Lambda sees them. */
  ports(worker: Worker) {
    const { classify, ledger } = this.plumbing;
    return {
      // Backoff inside the use cases waits on the simulated clock, where the worker may crash; jitter draws
      // from the seed. `now` is the worker's own clock, skew and all.
      ...simPorts(this, worker, { classify, ledger, faulty: () => this.faultsOn }),
      config: this.config,
      now: worker.now,
      log: this.log(worker),
      metrics,
    };
  }

  /** SinkDeps and the nudger, over the same bucket the committer writes manifests to. */
  sinkPorts(worker: Worker) {
    const { classify } = this.plumbing;
    const ctx = { aws: this.aws, worker, classify };
    const simCursors = new SimSinkCursors({ ...ctx, db: this.db });
    const cursors = this.plumbing.cursors?.(simCursors) ?? simCursors;
    const clean = { ...ctx, landing: this.landing, archive: this.archive, removals: this.removals };
    const claims = { ...ctx, db: this.db };
    return {
      cleaner: this.plumbing.cleaner?.(clean) ?? new SimLandingCleaner(clean),
      claims: this.plumbing.claims?.(claims) ?? new SimFileClaims(claims),
      sources: new SimSourceObjects({
        ...ctx,
        landing: this.landing,
        slowMs: this.slowLandingMs,
        scheduler: this.scheduler,
      }),
      deltaAt: (bucket: string, prefix: string) => {
        const at = { ...ctx, bucket: this.bucket, prefix };
        if (bucket !== MANIFEST_BUCKET) throw new Error(`the simulation has no bucket ${bucket}`);
        return this.plumbing.delta?.({ ...at, cursors }) ?? new SimDeltaStore(at);
      },
      manifestsAt: (bucket: string, prefix: string) => {
        if (bucket !== MANIFEST_BUCKET) throw new Error(`the simulation has no bucket ${bucket}`);
        return this.symlinkManifests(worker, prefix);
      },
      cursors,
      manifestBucket: MANIFEST_BUCKET,
      nudger: new SimSinkNudger({ ...ctx, queue: this.sinkQueue }),
      metrics,
      parts: this.sinkParts,
      checkpointRows: this.checkpointRows,
      // Unique like a UUID, and the same on every replay of the seed.
      newId: () => {
        this.attempts += 1;
        const unique = `${worker.name}-${this.attempts}`;
        return this.plumbing.attemptId?.(unique) ?? unique;
      },
    };
  }

  /** The Delta table and its data files as optimize and vacuum see them. */
  maintenancePorts(worker: Worker, prefix: string) {
    const ctx = { aws: this.aws, worker, classify: this.plumbing.classify, bucket: this.bucket, prefix };
    return {
      delta: this.plumbing.optimizeDelta?.(ctx) ?? new SimDeltaStore(ctx),
      vacuumDelta: new SimDeltaStore(ctx),
      files: this.plumbing.tableFiles?.(ctx) ?? new SimTableFiles(ctx),
      manifests: this.symlinkManifests(worker, prefix),
      newId: () => {
        this.attempts += 1;
        return `${worker.name}-${this.attempts}`;
      },
    };
  }

  /** A bronze table's symlink manifests, in the bucket beside its Delta table. */
  symlinkManifests(worker: Worker, prefix: string): SimSymlinkManifests {
    return new SimSymlinkManifests({
      aws: this.aws,
      worker,
      classify: this.plumbing.classify,
      bucket: this.bucket,
      scheduler: this.scheduler,
      prefix,
      regressions: this.manifestRegressions,
    });
  }

  /** The Delta table of a bronze table as another writer sees it: the same bucket, its own worker. */
  foreignDelta(worker: Worker, prefix: string): SimDeltaStore {
    return new SimDeltaStore({ aws: this.aws, worker, bucket: this.bucket, prefix });
  }

  /** Warnings and errors go into the trace: they are what an operator would read. */
  log(worker: Worker): Log {
    const line = (level: string) => (message: string, extra?: Record<string, unknown>) =>
      this.scheduler.log(
        `${worker.name} ${level} ${message} ${extra ? JSON.stringify(extra) : ''}`.trimEnd(),
      );
    return { debug() {}, info() {}, warn: line('warn'), error: line('error') };
  }
}

const metrics: MetricsSink = { count() {}, milliseconds() {}, flush() {} };

/**
 * Every default of the pipeline, once: the construct's validation, the construct itself, the functions'
 * configuration and environment schemas, the backfill and the test harnesses read them from here, so no two
 * layers can disagree. Imports nothing.
 */

const SWEEPER_TIMEOUT_SECONDS = 60;
const SWEEP_MARGIN_SECONDS = 10;

export const DEFAULTS = {
  /** How long a claim blocks other batchers; must exceed the batcher's timeout. */
  leaseSeconds: 600,
  batcherTimeoutSeconds: 300,
  committerTimeoutSeconds: 60,
  /** The batcher's SQS event source. */
  batchSize: 1000,
  batchingWindowSeconds: 20,
  maxConcurrency: 20,
  /** Parallel claim writes per invocation. */
  claimConcurrency: 64,
  /** Keys never ingested: Spark's and Hadoop's temporary files, `.tmp` files, hidden files. */
  ignoreGlobs: ['**/_temporary/**', '**/*.tmp', '**/.*'],
  /** How much one manifest version may cover (group commit); batches are capped by DynamoDB instead. */
  commitGroup: {
    /** About 400 bytes of manifest per file: 20,000 files is a manifest of about 8 MB. */
    maxFiles: 20_000,
    maxBytes: 10 * 1024 ** 3,
  },
  /** How often the sweeper runs; a batch or reservation older than this is re-requested. */
  sweepIntervalMinutes: 5,
  sweeper: {
    timeoutSeconds: SWEEPER_TIMEOUT_SECONDS,
    /** No call starts this long before the function's timeout. */
    marginSeconds: SWEEP_MARGIN_SECONDS,
    /** A run's budget where no Lambda context says how long is left (tests, the simulation). */
    budgetSeconds: SWEEPER_TIMEOUT_SECONDS - SWEEP_MARGIN_SECONDS,
    /** Commit requests re-sent per run at most, oldest first; the rest wait for the next run. */
    maxResends: 2000,
    /** Items per Scan page of the sealed index. */
    pageSize: 1000,
  },
  /** The ingest and commit queues' oldest-message alarm. */
  maxMessageAgeMinutes: 30,
  /**
   * Receives before SQS moves a message to its queue's DLQ (every queue's redrive policy). The committer hands
   * a commit that keeps failing for load to the sweeper well before it (HANDOVER_AFTER_RECEIVES).
   */
  maxReceiveCount: 10,
  /** How long every queue and DLQ keeps a message: SQS's maximum, 14 days (CreateQueue, MessageRetentionPeriod). */
  queueRetentionDays: 14,
  /**
   * A queue a function polls hides a received message this many of the function's timeouts: "at least six
   * times the timeout on your function. The extra time allows Lambda to retry if your function is throttled"
   * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
   */
  queueVisibilityTimeouts: 6,
  backfill: {
    timeoutSeconds: 300,
    recordsPerMessage: 10,
    pagesPerStep: 20,
    /** S3 ListObjectsV2 MaxKeys (1,000 is S3's maximum). */
    pageSize: 1000,
    /** A step starts no listing page after this: far inside the function's timeout. */
    stepBudgetSeconds: 120,
    stepsPerExecution: 1000,
  },
  reconcileSettleMinutes: 15,
  /** The bronze sink function (deployed when a table has `bronze`). */
  sink: {
    timeoutSeconds: 900,
    memoryMb: 512,
    /**
     * The visibility lease: each invocation sets its messages' visibility to this and extends it every third
     * of it while it runs, so a crashed invocation (out of memory, a runtime crash, a killed sandbox) holds its
     * tables about a minute, not the sink queue's 90-minute timeout. Not shorter: two beats 20 s apart can fail
     * (a throttle, a lost answer, each after the SDK's retries) before a live invocation's messages lapse and a
     * second sink runs the table beside it (safe, but wasted work); the beats cost one
     * `ChangeMessageVisibilityBatch` per 10 messages every 20 s of a run.
     */
    leaseSeconds: 60,
    /**
     * No part of a version starts in this last stretch of an invocation; the construct refuses a sink timeout
     * shorter than twice it, which would leave a run no time to write.
     */
    lastStartSeconds: 60,
  },
  /** A table's `bronze` settings (docs/bronze.md). */
  bronze: {
    /** Small enough that a file being built (held in memory, doubling buffer) fits a 128 MB Lambda. */
    maxFileBytes: 32 * 1024 * 1024,
    /** Delta Lake's own default `delta.checkpointInterval`: a reader replays at most this many JSON commits. */
    checkpointInterval: 100,
    /**
     * How often an idle table's sink is nudged by schedule: a lost last trigger or a file past its cleanSource
     * retention waits at most this long, not until the table's next commit. A nudge on a table that is up to
     * date reads its cursor and one absent manifest, and writes nothing.
     */
    nudgeEveryMinutes: 15,
    /** Auto Loader's `cleanSource.retentionDuration` default: 30 days. */
    cleanSourceRetentionDays: 30,
  },
} as const;

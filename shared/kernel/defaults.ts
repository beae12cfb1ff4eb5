/**
 * Every default of the pipeline, once: the construct's validation, the construct itself, the functions'
 * configuration schema and the backfill read them from here, so no two layers can disagree. Imports
 * nothing.
 */
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
  sweepIntervalMinutes: 5,
  /** The ingest and commit queues' oldest-message alarm. */
  maxMessageAgeMinutes: 30,
  backfill: {
    recordsPerMessage: 10,
    pagesPerStep: 20,
    /** S3 ListObjectsV2 MaxKeys (1,000 is S3's maximum). */
    pageSize: 1000,
    stepBudgetSeconds: 120,
    stepsPerExecution: 1000,
  },
  reconcileSettleMinutes: 15,
  /**
   * The bronze sink's visibility lease: each invocation sets its messages' visibility to this and extends it
   * every third of it while it runs, so a crashed invocation (out of memory, a runtime crash, a killed
   * sandbox) holds its tables about a minute, not the sink queue's 90-minute timeout. Not shorter: two beats
   * 20 s apart can fail (a throttle, a lost answer, each after the SDK's retries) before a live invocation's
   * messages lapse and a second sink runs the table beside it (safe, but wasted work); the beats cost one
   * `ChangeMessageVisibilityBatch` per 10 messages every 20 s of a run.
   */
  sinkLeaseSeconds: 60,
} as const;

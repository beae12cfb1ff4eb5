/**
 * Every default of the pipeline, once: the construct's validation, the construct itself, the functions'
 * configuration schema and the backfill read them from here, so no two layers can disagree (they did: the
 * lease was 900 s in the functions' schema and 600 s in the construct). Imports nothing.
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
} as const;

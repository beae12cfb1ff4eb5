/**
 * Names that several layers must spell the same way: the stack (infra/), the functions (shared/, functions/),
 * local mode and the CLI. This module loads nothing but shared/kernel/metrics.ts (which imports nothing), so the CLI
 * can read a stack output name without loading aws-cdk-lib (seconds per command);
 * test/unit/import-graph.test.ts keeps it that way.
 */

/** Stack outputs: infra/inlet-stack.ts writes them, the CLI and local mode read them back. */
export const OUTPUTS = {
  landingBucket: 'LandingBucketName',
  manifestBucket: 'ManifestBucketName',
  ledgerTable: 'LedgerTableName',
  ingestQueueUrl: 'IngestQueueUrl',
  ingestDlqUrl: 'IngestDlqUrl',
  commitQueueUrl: 'CommitQueueUrl',
  commitDlqUrl: 'CommitDlqUrl',
  tables: 'TablesJson',
  dashboard: 'DashboardName',
  alarmTopic: 'AlarmTopicArn',
  eventBus: 'EventBusName',
  backfillStateMachine: 'BackfillStateMachineArn',
  /** The Glue database the bronze tables are registered in; only when a table has `catalog`. */
  glueDatabase: 'GlueDatabaseName',
} as const;

/**
 * Environment variables, by name: each function's runtime reads them through a schema keyed by these names,
 * and infra/ and the test and bench harnesses write them with that schema's writer (both in
 * shared/config/function-env.ts, which says which function reads which).
 */
export const ENV = {
  /** The pipeline configuration, JSON (every function). */
  config: 'INLET_CONFIG',
  ledgerTable: 'INLET_LEDGER_TABLE',
  manifestBucket: 'INLET_MANIFEST_BUCKET',
  landingBucket: 'INLET_LANDING_BUCKET',
  ingestQueueUrl: 'INLET_INGEST_QUEUE_URL',
  commitQueueUrl: 'INLET_COMMIT_QUEUE_URL',
  sinkQueueUrl: 'INLET_SINK_QUEUE_URL',
  /** The sink queue's visibility timeout, which the sink's lease grows to for a table that keeps failing. */
  sinkQueueVisibilitySeconds: 'INLET_SINK_QUEUE_VISIBILITY_SECONDS',
  /** The Glue database the sink registers bronze tables in (absent: no table has `catalog`). */
  glueDatabase: 'INLET_GLUE_DATABASE',
  eventBus: 'INLET_EVENT_BUS',
  /** The sweeper re-requests sealed batches and reservations older than this (its schedule's interval). */
  staleAfterSeconds: 'INLET_STALE_AFTER_SECONDS',
  sweepMaxResends: 'INLET_SWEEP_MAX_RESENDS',
  sweepMarginSeconds: 'INLET_SWEEP_MARGIN_SECONDS',
  sweepBudgetSeconds: 'INLET_SWEEP_BUDGET_SECONDS',
  sweepPageSize: 'INLET_SWEEP_PAGE_SIZE',
  commitMaxBatches: 'INLET_COMMIT_MAX_BATCHES',
  commitMaxFiles: 'INLET_COMMIT_MAX_FILES',
  commitMaxBytes: 'INLET_COMMIT_MAX_BYTES',
  backfillRecordsPerMessage: 'INLET_BACKFILL_RECORDS_PER_MESSAGE',
  backfillPagesPerStep: 'INLET_BACKFILL_PAGES_PER_STEP',
  backfillPageSize: 'INLET_BACKFILL_PAGE_SIZE',
  backfillStepBudgetSeconds: 'INLET_BACKFILL_STEP_BUDGET_SECONDS',
  backfillStepsPerExecution: 'INLET_BACKFILL_STEPS_PER_EXECUTION',
  /** Powertools reads these two itself (the log level; the service, which the runtime also names). */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /** Local mode and tests only (shared/kernel/aws/target.ts): an emulator's endpoint, or which target. */
  awsEndpoint: 'INLET_AWS_ENDPOINT',
  awsTarget: 'INLET_AWS_TARGET',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];

/** Backfill state machine states (infra/backfill.ts); the CLI finds the progress in a history by them. */
export const BACKFILL_STATES = {
  plan: 'Plan',
  partitions: 'Partitions',
  step: 'Step',
  partitionNext: 'PartitionNext',
  partitionEnd: 'PartitionEnd',
  partitionFailed: 'PartitionFailed',
  merge: 'Merge',
  next: 'WhatNext',
  continueAsNew: 'ContinueAsNew',
  continued: 'Continued',
  done: 'Done',
  describeFailure: 'DescribeFailure',
  failed: 'Failed',
} as const;

/** Error names the backfill state machine retries with backoff (its Retry lists them; the handler throws them). */
export const RETRYABLE_ERRORS = { throttled: 'Inlet.Throttled', transient: 'Inlet.Transient' } as const;

/** CloudWatch namespace of the functions' EMF metrics; the dashboard and alarms read the same one. */
export const METRICS_NAMESPACE = 'Inlet';

/** Powertools service name per function: the `service` metric dimension and the log field. */
export const SERVICE = {
  batcher: 'inlet-batcher',
  committer: 'inlet-committer',
  sweeper: 'inlet-sweeper',
  backfill: 'inlet-backfill',
  sink: 'inlet-sink',
  maintenance: 'inlet-maintenance',
} as const;

/**
 * Metric names the handlers emit and the dashboard and alarms chart: kept in shared/kernel/metrics.ts, which imports
 * nothing either (names.ts and metrics.ts are the whole of what this module loads).
 */
export { METRIC, type MetricName } from './metrics.ts';

/** The `source` and `detail-type` of the events Inlet publishes: the bronze sink's rule matches them. */
export const EVENT_SOURCE = 'inlet';

export const BATCH_COMMITTED = 'BatchCommitted';

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
} as const;

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
} as const;

/**
 * Metric names the handlers emit and the dashboard and alarms chart: kept in shared/kernel/metrics.ts, which imports
 * nothing either (names.ts and metrics.ts are the whole of what this module loads).
 */
export { METRIC, type MetricName } from './metrics.ts';

/** The `source` and `detail-type` of the events Inlet publishes: the bronze sink's rule matches them. */
export const EVENT_SOURCE = 'inlet';

export const BATCH_COMMITTED = 'BatchCommitted';

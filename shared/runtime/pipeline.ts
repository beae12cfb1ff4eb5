import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { S3InventoryReader } from '../backfill/aws/s3-inventory-reader.ts';
import { S3ObjectLister } from '../backfill/aws/s3-lister.ts';
import { SqsEnqueuer } from '../backfill/aws/sqs-enqueuer.ts';
import type { BackfillDeps } from '../backfill/backfill.ts';
import { FUNCTION_ENV } from '../config/function-env.ts';
import type { PipelineConfig } from '../config/pipeline-config.ts';
import { DynamoDbLedger } from '../ingestion/aws/dynamodb-ledger.ts';
import { EventBridgePublisher } from '../ingestion/aws/eventbridge-publisher.ts';
import { S3BatchStore } from '../ingestion/aws/s3-batch-store.ts';
import { SqsCommitQueue } from '../ingestion/aws/sqs-commit-queue.ts';
import { SqsRetryScheduler } from '../ingestion/aws/sqs-retry-scheduler.ts';
import type { BatcherDeps } from '../ingestion/batcher-handler.ts';
import type { CommitterDeps } from '../ingestion/committer-handler.ts';
import type { Ledger, LedgerQueries } from '../ingestion/ledger.ts';
import type { SweepDeps } from '../ingestion/sweep.ts';
import type { SweeperSettings } from '../ingestion/sweeper-handler.ts';
import { trackAttempts } from '../kernel/aws/attempts.ts';
import { PowertoolsMetrics } from '../kernel/aws/powertools-metrics.ts';
import { clientConfig, targetFromEnv } from '../kernel/aws/target.ts';
import { systemClock } from '../kernel/clock.ts';
import { readEnv } from '../kernel/env.ts';
import type { Log } from '../kernel/log.ts';
import type { RetryScheduler } from '../kernel/message-visibility.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { ENV } from '../kernel/names.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** What every function's environment holds (FUNCTION_ENV), parsed. */
interface CommonVars {
  readonly [ENV.config]: PipelineConfig;
  readonly [ENV.ledgerTable]: string;
  readonly [ENV.metricsNamespace]: string;
}

/** What local mode and tests swap in: logs to a file or memory, metrics in memory. */
export interface RuntimeOverrides {
  readonly log?: Log;
  readonly metrics?: MetricsSink;
}

/** The Log port over Powertools Logger (structured JSON lines, CloudWatch Logs). */
export function powertoolsLog(serviceName: string): Log {
  const logger = new Logger({ serviceName });
  return {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
}

/**
 * What every function builds: configuration, logger, metrics and the ledger (its DynamoDB client). Each
 * function then adds only the clients it calls (below): loading an SDK client package is the larger part of
 * a cold start (docs/performance.md, "Cold starts"), so a bundle must not carry one it never uses.
 */
function baseRuntime(service: string, vars: CommonVars, env: Env, overrides: RuntimeOverrides) {
  const config: PipelineConfig = vars[ENV.config];
  const aws = clientConfig(targetFromEnv(env) ?? { kind: 'aws' });
  const metrics = new PowertoolsMetrics(
    new Metrics({ namespace: vars[ENV.metricsNamespace], serviceName: service }),
  );
  const ledger = new DynamoDbLedger({
    client: tracked(new DynamoDBClient(aws)),
    tableName: vars[ENV.ledgerTable],
    clock: systemClock,
  });
  return {
    config,
    aws,
    log: overrides.log ?? powertoolsLog(service),
    metrics: overrides.metrics ?? metrics,
    ledger,
    ...systemClock,
  };
}

/** Every client's attempts are watched: an error after an applied attempt must not read as "not applied". */
function tracked<C extends Parameters<typeof trackAttempts>[0]>(client: C): C {
  trackAttempts(client);
  return client;
}

/** The ledger adapter also answers operators' queries (local mode's summary and CLI read it from a runtime). */
type WithOperatorQueries = { readonly ledger: Ledger & LedgerQueries };

const batchStore = (s3: S3Client, bucket: string) => new S3BatchStore({ client: s3, bucket });

const commitQueue = (sqs: SQSClient, queueUrl: string) => new SqsCommitQueue({ client: sqs, queueUrl });

/**
 * Each function's dependencies from its environment (FUNCTION_ENV, every problem listed at once), built once
 * per container at module scope. INLET_AWS_ENDPOINT (set only by the local runner) points the same code at
 * an emulator.
 */
export function batcherRuntimeFromEnv(
  service: string,
  env: Env = process.env,
  overrides: RuntimeOverrides = {},
): BatcherDeps & WithOperatorQueries {
  const vars = readEnv(FUNCTION_ENV.batcher, env);
  const base = baseRuntime(service, vars, env, overrides);
  const sqs = tracked(new SQSClient(base.aws));
  return {
    ...base,
    store: batchStore(tracked(new S3Client(base.aws)), vars[ENV.manifestBucket]),
    commitQueue: commitQueue(sqs, vars[ENV.commitQueueUrl]),
    retries: new SqsRetryScheduler(sqs),
  };
}

/**
 * The committer calls SQS only to give a commit that failed for load back early (ChangeMessageVisibility,
 * docs/protocol.md "Reads and load"): the SQS client is loaded on that first call, not at every cold start.
 */
function lazyRetryScheduler(aws: ReturnType<typeof clientConfig>): RetryScheduler {
  let scheduler: Promise<RetryScheduler> | undefined;
  return {
    async retryLater(messages) {
      scheduler ??= Promise.all([
        import('@aws-sdk/client-sqs'),
        import('../ingestion/aws/sqs-retry-scheduler.ts'),
      ]).then(([sqs, retries]) => new retries.SqsRetryScheduler(tracked(new sqs.SQSClient(aws))));
      scheduler.catch(() => {
        scheduler = undefined;
      });
      return (await scheduler).retryLater(messages);
    },
  };
}

/**
 * The committer: ledger, manifests (S3) and events (EventBridge, when a bus is configured); SQS only when
 * a commit fails for load (above); its group-commit limits.
 */
export function committerRuntimeFromEnv(
  service: string,
  env: Env = process.env,
  overrides: RuntimeOverrides = {},
): CommitterDeps & WithOperatorQueries {
  const vars = readEnv(FUNCTION_ENV.committer, env);
  const base = baseRuntime(service, vars, env, overrides);
  return {
    ...base,
    store: batchStore(tracked(new S3Client(base.aws)), vars[ENV.manifestBucket]),
    retries: lazyRetryScheduler(base.aws),
    group: {
      maxBatches: vars[ENV.commitMaxBatches],
      maxFiles: vars[ENV.commitMaxFiles],
      maxBytes: vars[ENV.commitMaxBytes],
    },
    events: new EventBridgePublisher({
      client: tracked(new EventBridgeClient(base.aws)),
      eventBusName: vars[ENV.eventBus],
    }),
  };
}

/** The sweeper: ledger and the commit queue only, and its run's settings. */
export function sweeperRuntimeFromEnv(
  service: string,
  env: Env = process.env,
  overrides: RuntimeOverrides = {},
): SweepDeps & WithOperatorQueries & { readonly metrics: MetricsSink; readonly settings: SweeperSettings } {
  const vars = readEnv(FUNCTION_ENV.sweeper, env);
  const base = baseRuntime(service, vars, env, overrides);
  return {
    ...base,
    commitQueue: commitQueue(tracked(new SQSClient(base.aws)), vars[ENV.commitQueueUrl]),
    settings: {
      staleAfterMs: vars[ENV.staleAfterSeconds] * 1000,
      maxResends: vars[ENV.sweepMaxResends],
      marginMs: vars[ENV.sweepMarginSeconds] * 1000,
      budgetMs: vars[ENV.sweepBudgetSeconds] * 1000,
      pageSize: vars[ENV.sweepPageSize],
    },
  };
}

/** The backfill function's dependencies (shared/backfill/backfill.ts), from its environment. */
export function backfillFromEnv(
  service: string,
  env: Env = process.env,
  overrides: RuntimeOverrides = {},
): BackfillDeps {
  const vars = readEnv(FUNCTION_ENV.backfill, env);
  const base = baseRuntime(service, vars, env, overrides);
  // One client for listing and for reading inventory reports.
  const s3 = tracked(new S3Client(base.aws));
  return {
    ...base,
    landingBucket: vars[ENV.landingBucket],
    lister: new S3ObjectLister(s3),
    inventory: new S3InventoryReader(s3),
    enqueuer: new SqsEnqueuer({
      client: tracked(new SQSClient(base.aws)),
      queueUrl: vars[ENV.ingestQueueUrl],
      recordsPerMessage: vars[ENV.backfillRecordsPerMessage],
      clock: systemClock,
    }),
    limits: {
      pagesPerStep: vars[ENV.backfillPagesPerStep],
      pageSize: vars[ENV.backfillPageSize],
      stepBudgetMs: vars[ENV.backfillStepBudgetSeconds] * 1000,
      stepsPerExecution: vars[ENV.backfillStepsPerExecution],
    },
  };
}

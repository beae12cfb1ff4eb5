import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { configFromEnv, type PipelineConfig } from '../config.ts';
import { DynamoDbLedger } from '../ledger/dynamodb-ledger.ts';
import type { Log } from '../log.ts';
import type { MetricsSink } from '../metrics.ts';
import { EventBridgePublisher, noEvents } from '../storage/eventbridge-publisher.ts';
import { S3BatchStore } from '../storage/s3-batch-store.ts';
import { SqsCommitQueue } from '../storage/sqs-commit-queue.ts';
import { PowertoolsMetrics } from './powertools-metrics.ts';
import { clientConfig, targetFromEnv } from './target.ts';

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}

/**
 * Everything a Lambda entrypoint needs, from its environment: built once per container at module scope.
 * INLET_AWS_ENDPOINT (set only by the local runner) points the same code at an emulator.
 */
export function runtimeFromEnv(
  service: string,
  env: NodeJS.ProcessEnv = process.env,
  overrides: { readonly log?: Log; readonly metrics?: MetricsSink } = {},
) {
  const config: PipelineConfig = configFromEnv(env);
  // Only the four clients the functions use: createClients would also bundle and construct CloudFormation
  // and Step Functions clients into every Lambda.
  const aws = clientConfig(targetFromEnv(env) ?? { kind: 'aws' });
  const clients = {
    dynamodb: new DynamoDBClient(aws),
    s3: new S3Client(aws),
    sqs: new SQSClient(aws),
    events: new EventBridgeClient(aws),
  };
  const logger = new Logger({ serviceName: service });
  const metrics = new PowertoolsMetrics(
    new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE ?? 'Inlet', serviceName: service }),
  );
  const ledger = new DynamoDbLedger({
    client: clients.dynamodb,
    tableName: required(env, 'INLET_LEDGER_TABLE'),
  });
  const store = new S3BatchStore({ client: clients.s3, bucket: required(env, 'INLET_MANIFEST_BUCKET') });
  const commitQueue = new SqsCommitQueue({
    client: clients.sqs,
    queueUrl: required(env, 'INLET_COMMIT_QUEUE_URL'),
  });
  const events = env.INLET_EVENT_BUS
    ? new EventBridgePublisher({ client: clients.events, eventBusName: env.INLET_EVENT_BUS })
    : noEvents;
  const log: Log = {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
  return {
    config,
    clients,
    log: overrides.log ?? log,
    metrics: overrides.metrics ?? metrics,
    ledger,
    store,
    commitQueue,
    events,
    now: Date.now,
  };
}

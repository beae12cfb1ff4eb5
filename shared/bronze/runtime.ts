import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { trackAttempts } from '../aws/attempts.ts';
import { PowertoolsMetrics } from '../aws/powertools-metrics.ts';
import { powertoolsLog } from '../aws/runtime.ts';
import { clientConfig, targetFromEnv } from '../aws/target.ts';
import { configFromEnv, requiredEnv } from '../config.ts';
import type { SinkHandlerDeps } from '../handlers/sink-handler.ts';
import type { Log } from '../log.ts';
import type { MetricsSink } from '../metrics.ts';
import { METRICS_NAMESPACE, SERVICE } from '../names.ts';
import { S3BatchStore } from '../storage/s3-batch-store.ts';
import { SqsRetryScheduler } from '../storage/sqs-retry-scheduler.ts';
import { DynamoDbFileClaims } from './dynamodb-file-claims.ts';
import { DynamoDbSinkCursorStore } from './dynamodb-sink-cursor.ts';
import { S3DeltaStore } from './s3-delta-store.ts';
import { S3LandingCleaner } from './s3-landing-cleaner.ts';
import { S3SourceObjects } from './s3-source-objects.ts';
import { type SinkNudger, SqsSinkNudger } from './sink-queue.ts';

export type SinkRuntime = SinkHandlerDeps & { readonly nudger: SinkNudger; readonly metrics: MetricsSink };

/**
 * The sink function's dependencies from its environment, built once per container. Only S3, DynamoDB and
 * SQS clients: the sink publishes no events (its metrics are EMF log lines, no API call).
 */
export function sinkRuntimeFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: { readonly log?: Log; readonly nudger?: SinkNudger; readonly metrics?: MetricsSink } = {},
): SinkRuntime {
  const aws = clientConfig(targetFromEnv(env) ?? { kind: 'aws' });
  const s3 = new S3Client(aws);
  const dynamodb = new DynamoDBClient(aws);
  const sqs = new SQSClient(aws);
  for (const client of [s3, dynamodb, sqs]) trackAttempts(client);
  const manifestBucket = requiredEnv(env, 'INLET_MANIFEST_BUCKET');
  const log: Log = overrides.log ?? powertoolsLog(SERVICE.sink);
  const ledgerTable = requiredEnv(env, 'INLET_LEDGER_TABLE');
  const cursors = new DynamoDbSinkCursorStore({ client: dynamodb, tableName: ledgerTable });
  return {
    config: configFromEnv(env),
    store: new S3BatchStore({ client: s3, bucket: manifestBucket }),
    sources: new S3SourceObjects(s3),
    deltaAt: (bucket, prefix) => new S3DeltaStore(s3, bucket, prefix),
    cursors,
    heads: cursors,
    cleaner: new S3LandingCleaner(s3),
    claims: new DynamoDbFileClaims({ client: dynamodb, tableName: ledgerTable }),
    manifestBucket,
    log,
    metrics:
      overrides.metrics ??
      new PowertoolsMetrics(
        new Metrics({
          namespace: env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
          serviceName: SERVICE.sink,
        }),
      ),
    now: Date.now,
    retries: new SqsRetryScheduler(sqs),
    nudger:
      overrides.nudger ??
      new SqsSinkNudger({ client: sqs, queueUrl: requiredEnv(env, 'INLET_SINK_QUEUE_URL') }),
  };
}

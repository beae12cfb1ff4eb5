import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GlueClient } from '@aws-sdk/client-glue';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDbFileClaims } from '../bronze/aws/dynamodb-file-claims.ts';
import { DynamoDbSinkCursorStore } from '../bronze/aws/dynamodb-sink-cursor.ts';
import { GlueTableCatalog } from '../bronze/aws/glue-table-catalog.ts';
import { S3DeltaStore } from '../bronze/aws/s3-delta-store.ts';
import { S3LandingCleaner } from '../bronze/aws/s3-landing-cleaner.ts';
import { S3SourceObjects } from '../bronze/aws/s3-source-objects.ts';
import { S3SymlinkManifests } from '../bronze/aws/s3-symlink-manifests.ts';
import { SqsSinkNudger } from '../bronze/aws/sqs-sink-nudger.ts';
import type { SinkNudger } from '../bronze/ports.ts';
import type { SinkHandlerDeps } from '../bronze/sink-handler.ts';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { S3BatchStore } from '../ingestion/aws/s3-batch-store.ts';
import { SqsRetryScheduler } from '../ingestion/aws/sqs-retry-scheduler.ts';
import { trackAttempts } from '../kernel/aws/attempts.ts';
import { powertoolsLog } from '../kernel/aws/powertools-log.ts';
import { PowertoolsMetrics } from '../kernel/aws/powertools-metrics.ts';
import { clientConfig, targetFromEnv } from '../kernel/aws/target.ts';
import { systemClock } from '../kernel/clock.ts';
import { DEFAULTS } from '../kernel/defaults.ts';
import { readEnv } from '../kernel/env.ts';
import type { Log } from '../kernel/log.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { ENV, SERVICE } from '../kernel/names.ts';

export type SinkRuntime = SinkHandlerDeps & { readonly nudger: SinkNudger; readonly metrics: MetricsSink };

/**
 * The sink function's dependencies from its environment, built once per container. S3, DynamoDB and SQS
 * clients, and Glue's when a table is catalogued: the sink publishes no events (its metrics are EMF log
 * lines, no API call).
 */
export function sinkRuntimeFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: { readonly log?: Log; readonly nudger?: SinkNudger; readonly metrics?: MetricsSink } = {},
): SinkRuntime {
  const vars = readEnv(FUNCTION_ENV.sink, env);
  const aws = clientConfig(targetFromEnv(env) ?? { kind: 'aws' });
  const s3 = new S3Client(aws);
  const dynamodb = new DynamoDBClient(aws);
  const sqs = new SQSClient(aws);
  for (const client of [s3, dynamodb, sqs]) trackAttempts(client);
  const glueDatabase = vars[ENV.glueDatabase];
  const glue = glueDatabase === undefined ? undefined : new GlueClient(aws);
  if (glue) trackAttempts(glue);
  const manifestBucket = vars[ENV.manifestBucket];
  const log: Log = overrides.log ?? powertoolsLog(SERVICE.sink);
  const ledgerTable = vars[ENV.ledgerTable];
  const cursors = new DynamoDbSinkCursorStore({ client: dynamodb, tableName: ledgerTable });
  // The failed tables' backoff and the visibility lease: ChangeMessageVisibilityBatch on the sink queue.
  const visibility = new SqsRetryScheduler(sqs);
  return {
    config: vars[ENV.config],
    store: new S3BatchStore({ client: s3, bucket: manifestBucket }),
    sources: new S3SourceObjects(s3),
    deltaAt: (bucket, prefix) => new S3DeltaStore(s3, bucket, prefix),
    manifestsAt: (bucket, prefix) => new S3SymlinkManifests(s3, bucket, prefix),
    cursors,
    heads: cursors,
    cleaner: new S3LandingCleaner(s3),
    claims: new DynamoDbFileClaims({ client: dynamodb, tableName: ledgerTable }),
    manifestBucket,
    log,
    ...(glue && glueDatabase
      ? { catalog: { tables: new GlueTableCatalog(glue), database: glueDatabase } }
      : {}),
    metrics:
      overrides.metrics ??
      new PowertoolsMetrics(
        new Metrics({
          namespace: vars[ENV.metricsNamespace],
          serviceName: SERVICE.sink,
        }),
      ),
    ...systemClock,
    retries: visibility,
    nudger: overrides.nudger ?? new SqsSinkNudger({ client: sqs, queueUrl: vars[ENV.sinkQueueUrl] }),
    lease: {
      visibility,
      seconds: DEFAULTS.sink.leaseSeconds,
      // As the construct set it: DEFAULTS.queueVisibilityTimeouts times the sink's timeout.
      queueVisibilitySeconds: vars[ENV.sinkQueueVisibilitySeconds],
    },
  };
}

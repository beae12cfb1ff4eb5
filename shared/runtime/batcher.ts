import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { S3BatchStore } from '../ingestion/aws/s3-batch-store.ts';
import { SqsCommitQueue } from '../ingestion/aws/sqs-commit-queue.ts';
import { SqsRetryScheduler } from '../ingestion/aws/sqs-retry-scheduler.ts';
import type { BatcherDeps } from '../ingestion/batcher-handler.ts';
import { readEnv } from '../kernel/env.ts';
import { ENV } from '../kernel/names.ts';
import {
  baseRuntime,
  type Env,
  type RuntimeOverrides,
  tracked,
  type WithOperatorQueries,
} from './ledger-runtime.ts';

/**
 * The batcher's dependencies from its environment (FUNCTION_ENV, every problem listed at once), built once
 * per container at module scope: ledger, batches (S3), the commit queue and message visibility (SQS).
 * INLET_AWS_ENDPOINT (set only by the local runner) points the same code at an emulator.
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
    store: new S3BatchStore({ client: tracked(new S3Client(base.aws)), bucket: vars[ENV.manifestBucket] }),
    commitQueue: new SqsCommitQueue({ client: sqs, queueUrl: vars[ENV.commitQueueUrl] }),
    retries: new SqsRetryScheduler(sqs),
  };
}

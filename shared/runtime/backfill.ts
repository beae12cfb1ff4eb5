import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { S3InventoryReader } from '../backfill/aws/s3-inventory-reader.ts';
import { S3ObjectLister } from '../backfill/aws/s3-lister.ts';
import { SqsEnqueuer } from '../backfill/aws/sqs-enqueuer.ts';
import type { BackfillDeps } from '../backfill/backfill.ts';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { systemClock } from '../kernel/clock.ts';
import { readEnv } from '../kernel/env.ts';
import { ENV } from '../kernel/names.ts';
import { baseRuntime, type Env, type RuntimeOverrides, tracked } from './ledger-runtime.ts';

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

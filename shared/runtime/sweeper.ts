import { SQSClient } from '@aws-sdk/client-sqs';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { SqsCommitQueue } from '../ingestion/aws/sqs-commit-queue.ts';
import type { SweepDeps } from '../ingestion/sweep.ts';
import type { SweeperSettings } from '../ingestion/sweeper-handler.ts';
import { readEnv } from '../kernel/env.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { ENV } from '../kernel/names.ts';
import {
  baseRuntime,
  type Env,
  type RuntimeOverrides,
  tracked,
  type WithOperatorQueries,
} from './ledger-runtime.ts';

/** The sweeper's dependencies from its environment: ledger and the commit queue only, and its run's settings. */
export function sweeperRuntimeFromEnv(
  service: string,
  env: Env = process.env,
  overrides: RuntimeOverrides = {},
): SweepDeps & WithOperatorQueries & { readonly metrics: MetricsSink; readonly settings: SweeperSettings } {
  const vars = readEnv(FUNCTION_ENV.sweeper, env);
  const base = baseRuntime(service, vars, env, overrides);
  return {
    ...base,
    commitQueue: new SqsCommitQueue({
      client: tracked(new SQSClient(base.aws)),
      queueUrl: vars[ENV.commitQueueUrl],
    }),
    settings: {
      staleAfterMs: vars[ENV.staleAfterSeconds] * 1000,
      maxResends: vars[ENV.sweepMaxResends],
      marginMs: vars[ENV.sweepMarginSeconds] * 1000,
      budgetMs: vars[ENV.sweepBudgetSeconds] * 1000,
      pageSize: vars[ENV.sweepPageSize],
    },
  };
}

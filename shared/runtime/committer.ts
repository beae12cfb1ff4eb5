import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { EventBridgePublisher } from '../ingestion/aws/eventbridge-publisher.ts';
import { S3BatchStore } from '../ingestion/aws/s3-batch-store.ts';
import type { CommitterDeps } from '../ingestion/committer-handler.ts';
import type { clientConfig } from '../kernel/aws/target.ts';
import { readEnv } from '../kernel/env.ts';
import type { RetryScheduler } from '../kernel/message-visibility.ts';
import { ENV } from '../kernel/names.ts';
import {
  baseRuntime,
  type Env,
  type RuntimeOverrides,
  tracked,
  type WithOperatorQueries,
} from './ledger-runtime.ts';

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
 * The committer's dependencies from its environment, built once per container: ledger, manifests (S3) and
 * events (EventBridge, when a bus is configured); SQS only when a commit fails for load (above); its
 * group-commit limits.
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
    store: new S3BatchStore({ client: tracked(new S3Client(base.aws)), bucket: vars[ENV.manifestBucket] }),
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

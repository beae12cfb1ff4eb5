import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { DeserializeHandler, DeserializeHandlerArguments, HandlerExecutionContext } from '@smithy/types';
import { type AwsClients, createClients } from '../../local/aws/clients.ts';
import { trackAttempts } from '../../shared/kernel/aws/attempts.ts';
import { type AwsTarget, clientConfig } from '../../shared/kernel/aws/target.ts';
import { testTarget } from './aws.ts';

/**
 * What one SDK attempt does under the fault: `apply-then-500` sends the request (the write happens) and
 * then answers 500 as if the response was lost; `500` and `throttle` answer without sending anything.
 */
export type AttemptFault = 'apply-then-500' | '500' | 'throttle' | 'pass';

export interface SdkFault {
  /** Which calls are faulted (per command name and input); each matching call follows `script`. */
  readonly match: (commandName: string, input: Record<string, unknown>) => boolean;
  /** One entry per attempt of a matching call; attempts past the end pass. */
  readonly script: readonly AttemptFault[];
  /** How many matching calls follow the script; later ones pass. @default every one */
  readonly calls?: number;
}

export function serverError(): Error {
  return Object.assign(new Error('We encountered an internal error. Please try again.'), {
    name: 'InternalServerError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
  });
}

export function throttle(name = 'ProvisionedThroughputExceededException'): Error {
  return Object.assign(new Error('The level of configured provisioned throughput was exceeded.'), {
    name,
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });
}

const ATTEMPT = Symbol('faultAttempt');

/**
 * Injects AWS behaviour the emulator never shows, per SDK attempt: it sits below the SDK's retry
 * middleware, so the client retries these answers exactly as it would real ones. Returns the number of
 * calls that were faulted so far.
 */
export function injectSdkFault(
  client: { middlewareStack: { add(middleware: never, options: object): void } },
  fault: SdkFault,
): { faulted: () => number } {
  let faulted = 0;
  client.middlewareStack.add(
    ((next: DeserializeHandler<object, object>, context: HandlerExecutionContext) =>
      async (args: DeserializeHandlerArguments<object>) => {
        const name = (context as { commandName?: string }).commandName ?? '';
        const input = args.input as Record<string, unknown>;
        const state = context as { [ATTEMPT]?: number };
        if (state[ATTEMPT] === undefined) {
          if (faulted >= (fault.calls ?? Number.POSITIVE_INFINITY) || !fault.match(name, input))
            return next(args);
          faulted += 1;
          state[ATTEMPT] = 0;
        }
        const step = fault.script[state[ATTEMPT]] ?? 'pass';
        state[ATTEMPT] += 1;
        if (step === 'pass') return next(args);
        if (step === 'apply-then-500') {
          await next(args);
          throw serverError();
        }
        throw step === '500' ? serverError() : throttle();
      }) as never,
    { step: 'deserialize', priority: 'high', name: `inletTestFault${Math.random()}` },
  );
  return { faulted: () => faulted };
}

/** Milliseconds before SDK retry `attempt` (1-based) of a test client: exponential, but ~1/100 of the SDK's. */
const shortBackoff = (attempt: number) => 5 * 2 ** attempt;

/**
 * The product's clients for the test target, except that DynamoDB, S3 and SQS wait milliseconds between
 * SDK attempts. Everything a fault test asserts on is kept: the SDK's own StandardRetryStrategy decides
 * which answers are retried and spends the same retry quota, each client makes as many attempts as the
 * product's (its own `maxAttempts`, DynamoDB's 4), and the attempt tracking is installed. What goes: the
 * waits (throttles back off from 1 s, doubling: ~3.5 s per throttled call, the bulk of these files' time
 * before) and adaptive mode's client-side rate limiter, which after a throttle paces a new client's sends
 * at its 0.5/s floor for the rest of the test; neither changes which attempts happen or what the
 * adapters are told. ConfiguredRetryStrategy is the SDK's documented way to set the backoff
 * (https://www.npmjs.com/package/@smithy/util-retry, "MaxAttempts and BackoffComputation").
 */
export function shortBackoffClients(target: AwsTarget = testTarget()): AwsClients {
  const product = createClients(target);
  const config = clientConfig(target);
  const retry = (client: { config: { maxAttempts: () => Promise<number> } }) => ({
    ...config,
    retryMode: 'standard' as const,
    retryStrategy: new ConfiguredRetryStrategy(client.config.maxAttempts, shortBackoff),
  });
  const clients = {
    ...product,
    dynamodb: new DynamoDBClient(retry(product.dynamodb)),
    s3: new S3Client(retry(product.s3)),
    sqs: new SQSClient(retry(product.sqs)),
  };
  for (const replaced of [product.dynamodb, product.s3, product.sqs]) replaced.destroy();
  for (const client of [clients.dynamodb, clients.s3, clients.sqs]) trackAttempts(client);
  return clients;
}

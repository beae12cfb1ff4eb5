import type { DeserializeHandler, DeserializeHandlerArguments, HandlerExecutionContext } from '@smithy/types';

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

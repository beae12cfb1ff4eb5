import type {
  FinalizeHandler,
  FinalizeHandlerArguments,
  HandlerExecutionContext,
  RelativeMiddlewareOptions,
} from '@smithy/types';
import { attemptMayHaveApplied, POSSIBLY_APPLIED } from '../errors.ts';

const SEEN = Symbol('inletPossiblyApplied');

/**
 * Watches every attempt the SDK makes of a call (it sits inside the retry middleware) and marks the error
 * the call finally throws with whether ANY attempt may have been applied. The SDK itself reports only the
 * last attempt's error, which can be a throttle after an earlier attempt wrote the item and lost its answer.
 * `classifyAwsError` reads the mark.
 */
export function trackAttempts(client: {
  // Any SDK v3 client: the middleware does not depend on the service's input and output types.
  middlewareStack: { addRelativeTo(middleware: never, options: RelativeMiddlewareOptions): void };
}): void {
  client.middlewareStack.addRelativeTo(
    ((next: FinalizeHandler<object, object>, context: HandlerExecutionContext) =>
      async (args: FinalizeHandlerArguments<object>) => {
        const seen = context as { [SEEN]?: boolean };
        try {
          return await next(args);
        } catch (error) {
          seen[SEEN] = (seen[SEEN] ?? false) || attemptMayHaveApplied(error);
          if (error && typeof error === 'object') {
            (error as Record<string, unknown>)[POSSIBLY_APPLIED] = seen[SEEN];
          }
          throw error;
        }
      }) as never,
    { relation: 'after', toMiddleware: 'retryMiddleware', name: 'inletTrackAttempts', override: true },
  );
}

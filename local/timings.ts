// Local mode's timings: no imports, so `npm start` can read its defaults before loading anything else.

/** Local mode's batcher and committer timeout, unless `npm start -- --timeout-seconds N` says otherwise. */
export const LOCAL_TIMEOUT_SECONDS = 5;

/**
 * Local mode's recovery timings from one function timeout: both queues' visibility timeout is 6x it (the
 * stack's rule for SQS event sources) and the claim lease 2x (the stack requires it to exceed the batcher's
 * timeout). What a killed pipeline waits out before its messages and claims are taken up again.
 */
export function localTimings(timeoutSeconds: number): Record<string, unknown> {
  return {
    'inlet:batcherTimeoutSeconds': timeoutSeconds,
    'inlet:committerTimeoutSeconds': timeoutSeconds,
    'inlet:leaseSeconds': 2 * timeoutSeconds,
  };
}

import { type Backoff, backOff } from '../kernel/backoff.ts';
import type { Clock } from '../kernel/clock.ts';
import { InletError } from '../kernel/errors.ts';

/** Attempts of one read in the invocation (on top of the SDK's own retries of each). */
const READ_ATTEMPTS = 6;
/** 200 ms, 400 ms ... at most 2 s before each next attempt (full jitter). */
const READ_BACKOFF: Backoff = { base: 100, cap: 2_000, jitter: 'full' };
/** Time kept after the last read for the writes that follow it (reservation, manifest, transaction). */
export const READ_MARGIN_MS = 2_000;

/**
 * A read of the ledger or the bucket, retried with full-jitter backoff while it fails for a reason that
 * may pass (a throttle, a 5xx, a timeout: a retryable InletError). A read changes nothing, so its "unknown
 * outcome" is only a failure. Giving up fails the FIFO message, which holds the table for a visibility
 * timeout and spends one of the message's receives, so it is worth a few seconds here first. Stops early
 * enough (`deadline` less READ_MARGIN_MS) that the invocation can still fail the message cleanly rather
 * than be killed at its timeout. Permanent errors (a missing staged list, a bug) are thrown at once.
 */
export async function retryRead<T>(
  clock: Clock,
  deadline: number | undefined,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof InletError && error.retryable) || attempt >= READ_ATTEMPTS) throw error;
      const until = deadline === undefined ? undefined : deadline - READ_MARGIN_MS;
      if (!(await backOff(clock, READ_BACKOFF, attempt, until))) throw error;
    }
  }
}

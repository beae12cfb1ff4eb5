import type { Clock } from './clock.ts';

/**
 * Exponential backoff: the n-th delay (n from 0) has a ceiling of `base`·2ⁿ, at most `cap`, in whatever unit
 * the two are in. Jitter spreads retries that failed together, so they do not meet again
 * (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/):
 * - `full`: anywhere in [0, ceiling), for retries inside one invocation that collided with another writer;
 * - `upper-half`: in [ceiling/2, ceiling), for a message given back to its queue, which must not come back
 *   at once however the draw falls;
 * - `none`: the ceiling itself (a lease that doubles per receive).
 */
export interface Backoff {
  readonly base: number;
  readonly cap: number;
  readonly jitter: 'full' | 'upper-half' | 'none';
}

/** The n-th delay of `policy`: one draw of `random`, none without jitter. */
export function backoffDelay(policy: Backoff & { readonly jitter: 'none' }, n: number): number;
export function backoffDelay(policy: Backoff, n: number, random: () => number): number;
export function backoffDelay(policy: Backoff, n: number, random?: () => number): number {
  // 2³⁰·base is past every cap: the exponent stops there, so a huge n (a receive count) stays finite.
  const ceiling = Math.min(policy.cap, policy.base * 2 ** Math.min(30, n));
  switch (policy.jitter) {
    case 'full':
      return ceiling * draw(random);
    case 'upper-half':
      return ceiling / 2 + (ceiling / 2) * draw(random);
    case 'none':
      return ceiling;
  }
}

function draw(random: (() => number) | undefined): number {
  if (!random) throw new TypeError('a jittered backoff needs a random source');
  return random();
}

/**
 * Waits the n-th delay of `policy` on `clock`, or, when the wait would end after `deadline` (epoch ms), does
 * not wait and returns false: the caller stops retrying with time left to report why.
 */
export async function backOff(
  clock: Clock,
  policy: Backoff,
  n: number,
  deadline = Number.POSITIVE_INFINITY,
): Promise<boolean> {
  const delay = backoffDelay(policy, n, clock.random);
  if (clock.now() + delay > deadline) return false;
  await clock.sleep(delay);
  return true;
}

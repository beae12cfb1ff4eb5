import { setTimeout as wait } from 'node:timers/promises';

/**
 * Time and randomness, passed in rather than taken from globals, so the same code runs on the simulation's
 * clock and seed (test/sim/) as on the real ones: no code that backs off or draws a jitter reads `Date.now`,
 * `setTimeout` or `Math.random` itself.
 */
export interface Clock {
  /** epoch ms */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** A number in [0, 1), as `Math.random` draws. */
  readonly random: () => number;
}

/** The real clock: what the composition roots (shared/runtime/) give every function. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => wait(ms),
  random: () => Math.random(),
};

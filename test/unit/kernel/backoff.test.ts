import { describe, expect, it } from 'vitest';
import { backOff, backoffDelay } from '../../../shared/kernel/backoff.ts';
import type { Clock } from '../../../shared/kernel/clock.ts';

const draws = (...values: number[]) => {
  const left = [...values];
  return () => {
    const next = left.shift();
    if (next === undefined) throw new Error('drew more than expected');
    return next;
  };
};

describe('backoffDelay', () => {
  const full = { base: 50, cap: 2_000, jitter: 'full' } as const;

  it('doubles from base with each step up to the cap, and full jitter scales the ceiling by one draw', () => {
    expect([0, 1, 2, 5, 6, 20].map((n) => backoffDelay(full, n, () => 0.5))).toEqual([
      25, 50, 100, 800, 1_000, 1_000,
    ]);
    expect(backoffDelay(full, 3, () => 0)).toBe(0);
  });

  it('upper-half jitter stays in the upper half of the ceiling, whatever the draw', () => {
    const policy = { base: 5, cap: 900, jitter: 'upper-half' } as const;
    expect(backoffDelay(policy, 0, () => 0)).toBe(2.5);
    expect(backoffDelay(policy, 2, () => 0.5)).toBe(15);
    expect(backoffDelay(policy, 40, () => 0.999)).toBeCloseTo(899.55);
  });

  it('without jitter it is the ceiling and draws nothing; a huge step (a receive count) stays at the cap', () => {
    const lease = { base: 60, cap: 43_200, jitter: 'none' } as const;
    expect(backoffDelay(lease, 0)).toBe(60);
    expect(backoffDelay(lease, 3)).toBe(480);
    expect(backoffDelay(lease, 5_000)).toBe(43_200);
    expect(backoffDelay({ ...lease, base: 0 }, 5_000)).toBe(0);
  });

  it('a jittered policy without a random source is a programming error, not a zero delay', () => {
    expect(() => backoffDelay(full as never, 1)).toThrow(TypeError);
  });
});

describe('backOff', () => {
  function clock(at: number, random: () => number) {
    const slept: number[] = [];
    const c: Clock = {
      now: () => at,
      sleep: async (ms) => {
        slept.push(ms);
      },
      random,
    };
    return { c, slept };
  }

  it('sleeps the drawn delay on the clock it is given', async () => {
    const { c, slept } = clock(1_000, draws(0.5));
    expect(await backOff(c, { base: 100, cap: 2_000, jitter: 'full' }, 2)).toBe(true);
    expect(slept).toEqual([200]);
  });

  it('does not wait when the wait would end past the deadline, and says so', async () => {
    const { c, slept } = clock(1_000, draws(0.5));
    expect(await backOff(c, { base: 100, cap: 2_000, jitter: 'full' }, 2, 1_199)).toBe(false);
    expect(slept).toEqual([]);
  });
});

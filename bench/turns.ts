// Timing several things against each other on a shared machine: each is measured once per turn, in a new
// random order every turn, so a burst of load or a position effect (what ran just before) falls on all of
// them alike instead of on whichever always runs second; each figure then comes with its spread.

/** The median of a set of timings, with its minimum and quartiles (nearest rank), rounded. */
export interface Spread {
  readonly min: number;
  readonly p25: number;
  readonly median: number;
  readonly p75: number;
}

/** `values`' spread, rounded to 1/`precision` (tenths of a millisecond by default). */
export function spreadOf(values: readonly number[], precision = 10): Spread {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => {
    const value = sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return Math.round(value * precision) / precision;
  };
  return { min: at(0), p25: at(0.25), median: at(0.5), p75: at(0.75) };
}

/**
 * Runs `measure` on every item once per turn, `turns` times, each turn in a fresh random order; returns each
 * item's results in turn order (result `i` of two items came from the same turn, for ratios turn by turn).
 */
export function turnsInRandomOrder<T, R>(
  items: readonly T[],
  turns: number,
  measure: (item: T) => R,
  random: () => number = Math.random,
): R[][] {
  const results = items.map(() => [] as R[]);
  for (let turn = 0; turn < turns; turn++) {
    const order = items.map((_, i) => i);
    // Fisher-Yates.
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] ?? i, order[i] ?? j];
    }
    for (const i of order) {
      const item = items[i];
      if (item !== undefined) results[i]?.push(measure(item));
    }
  }
  return results;
}

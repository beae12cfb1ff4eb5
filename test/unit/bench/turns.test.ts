// The cold-start bench's turns (bench/turns.ts): every item once per turn, in a new order each turn, results
// kept in turn order so two items' results of the same index come from the same turn.
import { describe, expect, it } from 'vitest';
import { spreadOf, turnsInRandomOrder } from '../../../bench/turns.ts';

/** A fixed sequence in [0, 1), so the shuffle is reproducible. */
function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

describe('turnsInRandomOrder', () => {
  it('measures every item once per turn, and keeps each item’s results in turn order', () => {
    const order: string[] = [];
    let turn = 0;
    const results = turnsInRandomOrder(
      ['a', 'b', 'c'],
      4,
      (item) => {
        order.push(item);
        return `${item}${Math.floor(turn++ / 3)}`;
      },
      sequence([0.1, 0.9, 0.5, 0.3]),
    );

    expect(results).toEqual([
      ['a0', 'a1', 'a2', 'a3'],
      ['b0', 'b1', 'b2', 'b3'],
      ['c0', 'c1', 'c2', 'c3'],
    ]);
    for (let t = 0; t < 4; t++) expect(order.slice(t * 3, t * 3 + 3).sort()).toEqual(['a', 'b', 'c']);
  });

  it('does not keep one order: over the turns, each item runs in more than one position', () => {
    const positions = new Map<string, Set<number>>();
    let index = 0;
    turnsInRandomOrder(['a', 'b', 'c'], 12, (item) => {
      const set = positions.get(item) ?? new Set<number>();
      set.add(index++ % 3);
      positions.set(item, set);
    });

    for (const set of positions.values()) expect(set.size).toBeGreaterThan(1);
  });
});

describe('spreadOf', () => {
  it('gives the minimum, the quartiles and the median by nearest rank, rounded', () => {
    expect(spreadOf([9, 1, 5, 3, 7, 2, 8, 4, 6, 10.04])).toEqual({ min: 1, p25: 3, median: 6, p75: 8 });
    expect(spreadOf([1.234, 1.236], 100)).toEqual({ min: 1.23, p25: 1.23, median: 1.24, p75: 1.24 });
  });
});

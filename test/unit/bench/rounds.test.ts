// The protocol-vs-raw benchmark's arithmetic: per-round ratios, their median and spread, and the contract's
// top-level keys (design brief §6: `protocolVsRawRatio` and the seconds beside it, kept as they were).
import { describe, expect, it } from 'vitest';
import { contractKeys, median, type Round, sideBySide, spread } from '../../../bench/rounds.ts';

const side = (seconds: number, cpuSeconds: number) => ({ seconds, cpuSeconds });
const round = (protocol: [number, number], raw: [number, number]): Round => ({
  protocol: {
    ...side(...protocol),
    batcher: side(protocol[0] * 0.9, protocol[1] * 0.9),
    committer: side(protocol[0] * 0.1, protocol[1] * 0.1),
  },
  raw: side(...raw),
});

describe('median and spread', () => {
  it('takes the middle value of an odd count and the mean of the two middle ones of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('keeps every value in the order measured, with the range and the median rounded', () => {
    expect(spread([0.8123, 0.6, 0.95])).toEqual({
      median: 0.81,
      min: 0.6,
      max: 0.95,
      values: [0.81, 0.6, 0.95],
    });
    expect(() => spread([])).toThrow(/at least one/);
  });
});

describe('sideBySide', () => {
  // Round 2 is the protocol slowed by a neighbour: its ratio is the outlier the median leaves aside.
  const rounds = [round([5, 4], [4, 3.6]), round([10, 5], [4, 3.5]), round([4, 4], [4, 4.4])];
  const result = sideBySide(rounds);

  it('takes the ratio per round (raw over protocol) and reports their median, not the ratio of medians', () => {
    expect(result.ratio.values).toEqual([0.8, 0.4, 1]);
    expect(result.ratio.median).toBe(0.8);
    expect(result.cpuRatio.values).toEqual([0.9, 0.7, 1.1]);
    expect(result.cpuRatio.median).toBe(0.9);
    // The ratio of the two medians would be 4 / 5 here too, but not in general: rounds are pairs.
    expect(result.rounds).toBe(3);
  });

  it("reports each side's seconds and the protocol's split between batcher and committer", () => {
    expect(result.protocolSeconds).toEqual({ median: 5, min: 4, max: 10, values: [5, 10, 4] });
    expect(result.rawSeconds.median).toBe(4);
    expect(result.rawCpuSeconds.median).toBe(3.6);
    expect(result.batcherSeconds.median).toBe(4.5);
    expect(result.committerSeconds.median).toBe(0.5);
    expect(result.committerCpuSeconds.values).toEqual([0.4, 0.5, 0.4]);
  });
});

describe('contractKeys', () => {
  it('keeps the six keys checks outside the project read, each the median over the rounds', () => {
    const keys = contractKeys(
      sideBySide([round([5, 4], [4, 3.6]), round([4, 4], [4, 4.4]), round([6, 5], [3, 4])]),
    );
    expect(Object.keys(keys).sort()).toEqual([
      'protocolCpuSeconds',
      'protocolSeconds',
      'protocolVsRawCpuRatio',
      'protocolVsRawRatio',
      'rawCpuSeconds',
      'rawSeconds',
    ]);
    expect(keys.protocolVsRawRatio).toBe(0.8);
    expect(keys.protocolVsRawCpuRatio).toBe(0.9);
    expect(keys.protocolSeconds).toBe(5);
    expect(keys.rawSeconds).toBe(4);
    expect(keys.protocolCpuSeconds).toBe(4);
    expect(keys.rawCpuSeconds).toBe(4);
  });
});

// The arithmetic of a side-by-side measured in interleaved rounds (protocol, raw, protocol, raw ...): each
// round's ratio is taken from two runs a few seconds apart, and the median over rounds keeps one run that a
// neighbour's burst slowed from moving the figure. Pure, so it is unit-tested (test/unit/bench/rounds.test.ts).

/** One side of one round: wall seconds, and CPU seconds of this process and the emulator meanwhile. */
export interface Timed {
  readonly seconds: number;
  readonly cpuSeconds: number;
}

/** The protocol's side: the batcher's invocations and the committer's, and their sum. */
export interface ProtocolTimed extends Timed {
  readonly batcher: Timed;
  readonly committer: Timed;
}

export interface Round {
  readonly protocol: ProtocolTimed;
  readonly raw: Timed;
}

/** A figure over rounds: its median, its range, and every round's value in the order measured. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly values: readonly number[];
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The median (the mean of the two middle values for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function spread(values: readonly number[], round: (x: number) => number = round2): Spread {
  if (values.length === 0) throw new Error('a spread needs at least one value');
  return {
    median: round(median(values)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    values: values.map(round),
  };
}

/** Raw over protocol: above 1 the protocol was faster than plain puts (noise, for the same requests). */
const ratioOf = (raw: number, protocol: number) => (protocol > 0 ? raw / protocol : Number.NaN);

/** What a set of rounds reports: each ratio and each side's seconds, as spreads. */
export interface SideBySide {
  readonly rounds: number;
  readonly ratio: Spread;
  readonly cpuRatio: Spread;
  readonly protocolSeconds: Spread;
  readonly rawSeconds: Spread;
  readonly protocolCpuSeconds: Spread;
  readonly rawCpuSeconds: Spread;
  /** The protocol's seconds split: where its time goes (claims are the batcher's). */
  readonly batcherSeconds: Spread;
  readonly committerSeconds: Spread;
  readonly batcherCpuSeconds: Spread;
  readonly committerCpuSeconds: Spread;
}

/** Each round's ratio first, then the median of those (not the ratio of the medians: a round is a pair). */
export function sideBySide(rounds: readonly Round[]): SideBySide {
  return {
    rounds: rounds.length,
    ratio: spread(rounds.map((r) => ratioOf(r.raw.seconds, r.protocol.seconds))),
    cpuRatio: spread(rounds.map((r) => ratioOf(r.raw.cpuSeconds, r.protocol.cpuSeconds))),
    protocolSeconds: spread(
      rounds.map((r) => r.protocol.seconds),
      round3,
    ),
    rawSeconds: spread(
      rounds.map((r) => r.raw.seconds),
      round3,
    ),
    protocolCpuSeconds: spread(rounds.map((r) => r.protocol.cpuSeconds)),
    rawCpuSeconds: spread(rounds.map((r) => r.raw.cpuSeconds)),
    batcherSeconds: spread(
      rounds.map((r) => r.protocol.batcher.seconds),
      round3,
    ),
    committerSeconds: spread(
      rounds.map((r) => r.protocol.committer.seconds),
      round3,
    ),
    batcherCpuSeconds: spread(rounds.map((r) => r.protocol.batcher.cpuSeconds)),
    committerCpuSeconds: spread(rounds.map((r) => r.protocol.committer.cpuSeconds)),
  };
}

/**
 * The contract's top-level keys (design brief §6, `protocolVsRawRatio`), each the median over the emulator's
 * rounds: the ratios are the medians of the rounds' ratios, the seconds each side's median.
 */
export function contractKeys(emulator: SideBySide) {
  return {
    protocolVsRawRatio: emulator.ratio.median,
    protocolVsRawCpuRatio: emulator.cpuRatio.median,
    protocolSeconds: emulator.protocolSeconds.median,
    protocolCpuSeconds: emulator.protocolCpuSeconds.median,
    rawSeconds: emulator.rawSeconds.median,
    rawCpuSeconds: emulator.rawCpuSeconds.median,
  };
}

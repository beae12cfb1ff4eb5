// A manifest version too big for one sink pass: 20,000 landing files, each GET taking the tens of
// milliseconds S3 documents for small objects, on a simulated clock that also kills the invocation at its
// timeout as Lambda does. Every run must move the table on, and the version must end in the table whole.
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import type { ReadIdentity } from '../../../shared/bronze/ports.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

/** Timers on a simulated clock: `run` advances it to the next timer whenever nothing else can run. */
class VirtualClock {
  now = 0;
  private timers: { at: number; resolve: () => void }[] = [];

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timers.push({ at: this.now + ms, resolve }));
  }

  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    work.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    while (!settled) {
      // Every continuation that can run runs before the clock moves.
      await new Promise((resolve) => setImmediate(resolve));
      if (settled) break;
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers.shift();
      if (!next) throw new Error('nothing to wait for, and the work is not done');
      this.now = Math.max(this.now, next.at);
      next.resolve();
    }
    return work;
  }
}

class LambdaTimeout extends Error {}

/** Landing files whose every GET takes `latencyMs` of the clock and fails once Lambda has killed the run. */
class SlowSources extends MemorySources {
  killAt = Number.POSITIVE_INFINITY;
  gets = 0;
  constructor(
    private readonly clock: VirtualClock,
    private readonly latencyMs: number,
  ) {
    super(1 << 20);
  }
  private async wait(): Promise<void> {
    this.gets += 1;
    await this.clock.sleep(this.latencyMs);
    if (this.clock.now > this.killAt) throw new LambdaTimeout('Lambda killed the invocation at its timeout');
  }
  override async open(ref: ObjectRef, identity: ReadIdentity) {
    await this.wait();
    return super.open(ref, identity);
  }
  override async openRandom(ref: ObjectRef, identity: ReadIdentity) {
    await this.wait();
    return super.openRandom(ref, identity);
  }
}

const FILES = 20_000;

function world(latencyMs: number) {
  const clock = new VirtualClock();
  const sources = new SlowSources(clock, latencyMs);
  const keys = Array.from({ length: FILES }, (_, i) => `in/f${i}.json`);
  for (const [i, key] of keys.entries()) sources.objects.set(key, `{"id":${i},"v":"x${i % 7}"}\n`);
  const manifest = manifestOf('t', 1, keys);
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const sink = new SinkTable({
    config: parsePipelineConfig({ tables: [{ name: 't', prefix: 'in/', bronze: { format: 'jsonl' } }] }),
    store: { getManifest: async (_t, v) => (v === 1 ? manifest : undefined) },
    sources,
    deltaAt: () => delta,
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    now: () => clock.now,
  });
  /**
   * One invocation of `timeoutMs`, as the handler runs it (no part starts in its last minute, a part still
   * running 15 s before the end is abandoned); `killed` when Lambda ended it first.
   */
  const invoke = async (timeoutMs: number) => {
    const start = clock.now;
    sources.killAt = start + timeoutMs;
    try {
      const outcome = await clock.run(
        sink.catchUp('t', start + timeoutMs - 60_000, start + timeoutMs - 15_000),
      );
      return { killed: false, caughtUp: outcome.caughtUp, ms: clock.now - start };
    } catch (error) {
      if (error instanceof LambdaTimeout) return { killed: true, caughtUp: false, ms: clock.now - start };
      throw error;
    } finally {
      // The next invocation starts after this one's end.
      clock.now = Math.max(clock.now, start + timeoutMs);
    }
  };
  return { clock, sources, delta, cursors, invoke };
}

/** Every `id` in the table's live files, in order. */
async function idsInTable(delta: MemoryDelta): Promise<number[]> {
  const { state } = await loadSnapshot(delta);
  const ids: number[] = [];
  for (const add of state.adds.values()) {
    const bytes = delta.files.get(add.path) as Uint8Array;
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    for (const row of await parquetReadObjects({ file, columns: ['id'] })) ids.push(Number(row.id));
  }
  return ids.sort((a, b) => a - b);
}

describe('a manifest version of 20,000 landing files at S3 latencies', () => {
  it('is one commit within the first 15-minute invocation at 25 ms a GET', async () => {
    const w = world(25);
    const run = await w.invoke(15 * 60_000);
    expect(run).toMatchObject({ killed: false, caughtUp: true });
    // 16 reads at a time: 20,000 x 25 ms / 16 is about 31 s of waiting (sequential, twice over: 1,000 s).
    expect(run.ms).toBeLessThan(60_000);
    expect(w.sources.gets).toBe(FILES);
    expect([...w.delta.commits.keys()]).toEqual([0]);
    expect(await w.cursors.get('t')).toMatchObject({ manifestVersion: 1, filesDone: 0, rows: FILES });
    expect(await idsInTable(w.delta)).toEqual([...Array(FILES).keys()]);
  }, 120_000);

  it('never leaves the cursor stuck across runs, whatever the latency: parts shrink until one fits', async () => {
    // 100 ms a GET and 90-second invocations (30 s of budget, as the simulation's sink has): the whole
    // version would need 125 s of reads.
    const w = world(100);
    const positions: string[] = [];
    for (let runs = 1; runs <= 12; runs++) {
      const run = await w.invoke(90_000);
      expect(run.killed, `run ${runs} ran into the Lambda timeout`).toBe(false);
      const cursor = await w.cursors.get('t');
      positions.push(`${cursor.manifestVersion}+${cursor.filesDone}`);
      if (run.caughtUp) break;
    }
    expect(positions.at(-1)).toBe('1+0');
    // Every second run at the latest moves the table on: no run repeats the position of two runs before.
    positions.forEach((p, i) => {
      if (i >= 2) expect(p, `runs ${i - 1}..${i + 1}: ${positions.join(' ')}`).not.toBe(positions[i - 2]);
    });
    expect(w.delta.commits.size).toBeGreaterThan(1);
    expect(await idsInTable(w.delta)).toEqual([...Array(FILES).keys()]);
    expect(await w.cursors.get('t')).toMatchObject({ rows: FILES });
  }, 180_000);
});

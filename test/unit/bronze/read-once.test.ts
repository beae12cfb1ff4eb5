// What a bronze table costs in landing reads (docs/bronze.md, "Writing a version"; bench `cost.bronze`): a
// part's files that fit the memory it may hold are read once and kept for both passes; only a file too big
// to hold is read twice (streamed each time), so memory stays bounded.
import { describe, expect, it } from 'vitest';
import type { SourceObjects } from '../../../shared/bronze/ports.ts';
import { DEFAULT_PART_LIMITS } from '../../../shared/bronze/write-version.ts';
import { liveRows } from './memory.ts';
import { sinkSetup } from './sink-fixture.ts';

const keys = Array.from({ length: 40 }, (_, i) => `in/f${i}.json`);

/** The sink's landing reads, counted per key. */
function counted(maxBytes: number) {
  const opens = new Map<string, number>();
  const t = sinkSetup({
    parts: { ...DEFAULT_PART_LIMITS, maxBytes },
    sources: (landing): SourceObjects => ({
      open: (ref, identity) => {
        opens.set(ref.key, (opens.get(ref.key) ?? 0) + 1);
        return landing.open(ref, identity);
      },
      openRandom: (ref, identity) => landing.openRandom(ref, identity),
    }),
  });
  return { t, opens };
}

describe('landing reads per file', () => {
  it('reads each file of a version once when the part can hold them', async () => {
    const { t, opens } = counted(DEFAULT_PART_LIMITS.maxBytes);
    t.commit(1, keys);
    expect(await t.catchUp()).toMatchObject({ written: [0], added: { rows: 40 } });
    expect([...opens.values()]).toEqual(keys.map(() => 1));
  });

  it('reads a file it cannot hold twice, streamed, and writes the same rows', async () => {
    // Manifest sizes are 1 byte here: with no memory to hold, every file is its own part, streamed twice.
    const { t, opens } = counted(0);
    t.commit(1, keys);
    expect(await t.catchUp()).toMatchObject({ added: { rows: 40 } });
    expect([...opens.values()]).toEqual(keys.map(() => 2));
    expect((await liveRows(t.delta)).map((r) => r.k).sort()).toEqual([...keys].sort());
  });
});

// Which write of a landing key each part of a version reads (docs/bronze.md, "Which write the sink reads"),
// and what its commit records of it for cleanSource, when a version is written in parts and when a part is
// tried again: the same rules as a version written whole.
import { describe, expect, it } from 'vitest';
import type { SourceObjects } from '../../../shared/bronze/ports.ts';
import { DEFAULT_PART_LIMITS } from '../../../shared/bronze/write-version.ts';
import { liveRows } from './memory.ts';
import { sinkSetup } from './sink-fixture.ts';

/** One landing file a part. */
const oneFileParts = { ...DEFAULT_PART_LIMITS, maxFiles: 1 };
const clean = { action: 'delete', retentionDays: 8 };

/** `commitInfo.inlet` of every commit, in Delta version order. */
function inletOf(delta: { readonly commits: ReadonlyMap<number, string> }) {
  return [...delta.commits]
    .sort(([a], [b]) => a - b)
    .map(([, text]) => {
      const line = text.split('\n').find((l) => l.includes('"commitInfo"')) ?? '{}';
      return (JSON.parse(line) as { commitInfo: { inlet: Record<string, unknown> } }).commitInfo.inlet;
    });
}

describe('a version written in parts reads the write its manifest names', () => {
  it('path identity: the part that read a rewrite records it, and cleanSource leaves that key (counted)', async () => {
    const t = sinkSetup({ cleanSource: clean, parts: oneFileParts });
    t.commit(1, ['in/a.json', 'in/b.json', 'in/c.json']);
    // Rewritten after its event, before the sink: under path identity the sink reads what is there now.
    t.sources.objects.set('in/b.json', '{"k":"b2"}');
    expect(await t.catchUp()).toMatchObject({ written: [0, 1, 2], versions: [1] });
    const commits = inletOf(t.delta);
    expect(commits.map((c) => c.rewrittenSources)).toEqual([
      undefined,
      ['s3://landing/in/b.json'],
      undefined,
    ]);
    t.at(9);
    expect(await t.catchUp()).toMatchObject({ cleaned: [1], cleanedFiles: 2, cleanLeft: 1 });
    expect(t.sources.objects.get('in/b.json')).toBe('{"k":"b2"}');
    expect([...t.sources.objects.keys()]).toEqual(['in/b.json']);
  });

  it('allowOverwrites: a part never reads a later write of the key (missing, counted); cleanSource never removes it', async () => {
    const t = sinkSetup({ cleanSource: clean, parts: oneFileParts, allowOverwrites: true });
    t.commit(1, ['in/a.json', 'in/b.json']);
    t.sources.objects.set('in/b.json', '{"k":"b2"}');
    const outcome = await t.catchUp();
    expect(outcome).toMatchObject({ written: [0, 1], added: { rows: 1, missingSources: 1 } });
    expect(inletOf(t.delta).map((c) => c.missingSources)).toEqual([[], ['s3://landing/in/b.json']]);
    expect((await liveRows(t.delta)).map((r) => r.k)).toEqual(['in/a.json']);
    t.at(9);
    expect(await t.catchUp()).toMatchObject({ cleaned: [1], cleanedFiles: 1, cleanLeft: 0 });
    expect(t.cleaner.calls).toEqual(['delete in/a.json']);
    expect(t.sources.objects.get('in/b.json')).toBe('{"k":"b2"}');
  });

  it('a part whose file was rewritten between its two reads fails, and its next attempt reads and records the rewrite', async () => {
    let rewriteAt: number | undefined;
    let opens = 0;
    // Files bigger than the bytes a part may hold are streamed twice (manifest sizes are 1 byte here).
    const t = sinkSetup({
      cleanSource: clean,
      parts: { ...oneFileParts, maxBytes: 0 },
      sources: (landing): SourceObjects => ({
        open: async (ref, identity) => {
          opens += 1;
          // The key is rewritten just before the second pass opens it again.
          if (opens === rewriteAt) landing.objects.set(ref.key, '{"k":"a2"}\n{"k":"a3"}');
          return landing.open(ref, identity);
        },
        openRandom: (ref, identity) => landing.openRandom(ref, identity),
      }),
    });
    t.commit(1, ['in/a.json']);
    rewriteAt = 2;
    await expect(t.catchUp()).rejects.toMatchObject({
      retryable: true,
      message: /changed while it was written/,
    });
    expect(t.delta.commits.size).toBe(0);
    const outcome = await t.catchUp();
    expect(outcome).toMatchObject({ written: [0], added: { rows: 2, missingSources: 0 } });
    // No mix of the two writes: the second attempt read the rewrite whole, and says so.
    expect((await liveRows(t.delta)).map((r) => r.k)).toEqual(['a2', 'a3']);
    expect(inletOf(t.delta)[0]?.rewrittenSources).toEqual(['s3://landing/in/a.json']);
    t.at(9);
    expect(await t.catchUp()).toMatchObject({ cleaned: [1], cleanedFiles: 0, cleanLeft: 1 });
    expect(t.sources.objects.has('in/a.json')).toBe(true);
  });
});

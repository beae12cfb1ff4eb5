import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { optimizeTable } from '../../../shared/bronze/optimize.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { isHidden, tableRetentionMs, vacuumTable } from '../../../shared/bronze/vacuum.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { liveRows, MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { memoryTableFiles } from './table-files.ts';

const DAY = 86_400_000;
const WEEK = 7 * DAY;
const T0 = Date.UTC(2026, 11, 1);

/** Five versions written at T0, then optimized at T0 + 1 day: five small files removed, one added. */
async function optimized() {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const config = bronzeConfigSchema.parse({ format: 'jsonl' });
  let schema: Awaited<ReturnType<typeof writeVersion>>['schema'] | undefined;
  for (let v = 1; v <= 5; v++) {
    sources.objects.set(`f${v}`, `{"id":${v}}\n`);
    const r = await writeVersion(
      { sources, delta },
      { table: 't', location: 's3://b/p', config, manifest: manifestOf('t', v, [`f${v}`]), schema },
    );
    schema = r.schema;
  }
  const uploaded = new Map<string, number>([...delta.files.keys()].map((p) => [p, T0]));
  const modified = (p: string) => uploaded.get(p) ?? T0 + DAY;
  const beforeOptimize = (await loadSnapshot(delta)).state.version;
  await optimizeTable(
    {
      ...systemClock,
      now: () => T0 + DAY,
      delta,
      files: memoryTableFiles(delta, modified),
      newId: () => 'opt',
    },
    { table: 't', targetFileBytes: 1 << 20, finishBy: Number.POSITIVE_INFINITY },
  );
  return { delta, modified, uploaded, beforeOptimize };
}

const vacuumAt = (delta: MemoryDelta, files: ReturnType<typeof memoryTableFiles>, now: number) =>
  vacuumTable({ now: () => now, delta, files }, { table: 't', retentionMs: WEEK });

describe('vacuum', () => {
  it('keeps the files an old version needs within the retention, so time travel to it still reads them', async () => {
    const { delta, modified, beforeOptimize } = await optimized();
    const files = memoryTableFiles(delta, modified);
    const result = await vacuumAt(delta, files, T0 + 3 * DAY);
    expect(result).toMatchObject({ filesDeleted: 0, filesKept: 5 });
    const { state } = await loadSnapshot(delta, beforeOptimize);
    for (const path of state.adds.keys()) expect(delta.files.has(path)).toBe(true);
  });

  it('keeps the live files of a partitioned table, whose log paths are URIs of escaped directories', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    const config = bronzeConfigSchema.parse({
      format: 'jsonl',
      schemaHints: { region: 'string' },
      partitionBy: ['region'],
    });
    sources.objects.set('f1', '{"region":"x/y","id":1}\n{"region":"a b","id":2}\n{"region":"50%","id":3}\n');
    await writeVersion(
      { sources, delta },
      { table: 't', location: 's3://b/p', config, manifest: manifestOf('t', 1, ['f1']), schema: undefined },
    );
    const rows = await liveRows(delta);
    const files = memoryTableFiles(delta, () => T0);
    const result = await vacuumAt(delta, files, T0 + 30 * DAY);
    expect(result.filesDeleted).toBe(0);
    expect(delta.files.size).toBe(3);
    expect(await liveRows(delta)).toEqual(rows);
  });

  it('deletes the files removed longer ago than the retention, never a live one', async () => {
    const { delta, modified } = await optimized();
    const rows = await liveRows(delta);
    const files = memoryTableFiles(delta, modified);
    const result = await vacuumAt(delta, files, T0 + DAY + WEEK + 1);
    expect(result.filesDeleted).toBe(5);
    expect(files.deleted.every((p) => p.startsWith('part-0000'))).toBe(true);
    expect(await liveRows(delta)).toEqual(rows);
    expect(delta.files.size).toBe(1);
  });

  it('counts a file removed recently from its removal, not its upload: written 8 days ago, removed 1 day ago, kept', async () => {
    const { delta, modified } = await optimized();
    const files = memoryTableFiles(delta, modified);
    // Eight days after the files were written, seven after optimize removed them.
    const result = await vacuumAt(delta, files, T0 + 8 * DAY - 1);
    expect(result.filesDeleted).toBe(0);
  });

  it('never deletes a file uploaded but not committed yet (a sink or optimize in flight), only old orphans', async () => {
    const { delta, modified, uploaded } = await optimized();
    const now = T0 + 30 * DAY;
    delta.files.set('part-inflight.snappy.parquet', new Uint8Array([1]));
    uploaded.set('part-inflight.snappy.parquet', now - 60_000);
    delta.files.set('part-orphan.snappy.parquet', new Uint8Array([1, 2]));
    uploaded.set('part-orphan.snappy.parquet', now - WEEK - 1);
    const files = memoryTableFiles(delta, modified);
    await vacuumAt(delta, files, now);
    expect(delta.files.has('part-inflight.snappy.parquet')).toBe(true);
    expect(delta.files.has('part-orphan.snappy.parquet')).toBe(false);
  });

  it("follows the table's own retention when it is longer, and a dry run deletes nothing", async () => {
    const { delta, modified } = await optimized();
    const { state } = await loadSnapshot(delta);
    const metaData = {
      ...state.metaData,
      configuration: { 'delta.deletedFileRetentionDuration': 'interval 30 days' },
    };
    await delta.putCommitIfAbsent(state.version + 1, `${JSON.stringify({ metaData })}\n`);
    const files = memoryTableFiles(delta, modified);
    expect((await vacuumAt(delta, files, T0 + 10 * DAY)).filesDeleted).toBe(0);
    const dry = await vacuumTable(
      { now: () => T0 + 40 * DAY, delta, files },
      { table: 't', retentionMs: WEEK, dryRun: true },
    );
    expect(dry).toMatchObject({ filesDeleted: 5, retentionMs: 30 * DAY });
    expect(files.deleted).toEqual([]);
  });

  it('reads retention intervals and hidden names as Delta does', () => {
    const meta = (v: string) => ({
      id: 'x',
      format: { provider: 'parquet' },
      schemaString: '{}',
      partitionColumns: [],
      configuration: { 'delta.deletedFileRetentionDuration': v },
    });
    expect(tableRetentionMs(meta('interval 7 days'))).toBe(WEEK);
    expect(tableRetentionMs(meta('interval 2 hours'))).toBe(2 * 3_600_000);
    expect(tableRetentionMs(meta('soon'))).toBeUndefined();
    expect(isHidden('_delta_log/00.json')).toBe(true);
    expect(isHidden('.tmp/x.parquet')).toBe(true);
    expect(isHidden('_col=1/part-0.parquet')).toBe(false);
    expect(isHidden('part-0.parquet')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { checkpointName, readCheckpoint } from '../../../shared/bronze/checkpoint.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { vacuumTable } from '../../../shared/bronze/vacuum.ts';
import { after as daysAfter, sinkSetup } from './sink-fixture.ts';
import { memoryTableFiles } from './table-files.ts';

const DAY = 86_400_000;

/**
 * A table checkpointed every 2 versions whose first two files another writer removed at day 0 (one tombstone
 * with its time, one without), then written on at `days` until the next checkpoint.
 */
async function tombstonedTable(days: number, bronze: Record<string, unknown> = {}) {
  const t = sinkSetup({ bronze: { checkpointInterval: 2, ...bronze } });
  for (let v = 1; v <= 2; v++) t.commit(v);
  await t.catchUp();
  const { state } = await loadSnapshot(t.delta);
  const [timed, untimed] = [...state.adds.keys()].sort();
  const version = state.version + 1;
  t.delta.commits.set(
    version,
    [
      { commitInfo: { timestamp: daysAfter(0), operation: 'DELETE' } },
      { remove: { path: timed, deletionTimestamp: daysAfter(0), dataChange: true } },
      { remove: { path: untimed, dataChange: true } },
    ]
      .map((a) => JSON.stringify(a))
      .join('\n'),
  );
  t.at(days);
  for (let v = 3; v <= 4; v++) t.commit(v);
  await t.catchUp();
  const checkpoint = Math.max(
    ...[...t.delta.logFiles.keys()].filter((n) => n.endsWith('.parquet')).map((n) => Number.parseInt(n, 10)),
  );
  const removes = (
    await readCheckpoint(checkpoint, t.delta.logFiles.get(checkpointName(checkpoint)) ?? new Uint8Array())
  ).removes;
  return { t, timed: timed as string, untimed: untimed as string, removes, checkpoint };
}

describe('checkpoint tombstones', () => {
  it('a checkpoint keeps a tombstone within the retention (7 days by default)', async () => {
    const { removes, timed, untimed, checkpoint } = await tombstonedTable(6);
    expect(checkpoint).toBeGreaterThan(2);
    expect([...removes.keys()].sort()).toEqual([timed, untimed].sort());
  });

  it('a checkpoint drops a tombstone older than the retention; one without a time is kept', async () => {
    const { removes, untimed } = await tombstonedTable(8);
    expect([...removes.keys()]).toEqual([untimed]);
  });

  it("the retention is the longer of the table's delta.deletedFileRetentionDuration and maintenance.retentionHours", async () => {
    // maintenance keeps 10 days: a tombstone of 8 days stays, so vacuum still sees when the file left.
    const kept = await tombstonedTable(8, { maintenance: { retentionHours: 240 } });
    expect(kept.removes.has(kept.timed)).toBe(true);
    const dropped = await tombstonedTable(11, { maintenance: { retentionHours: 240 } });
    expect(dropped.removes.has(dropped.timed)).toBe(false);
  });

  it('vacuum still deletes the file whose tombstone the checkpoint dropped, and keeps the live ones', async () => {
    const { t, timed } = await tombstonedTable(8);
    const live = [...(await loadSnapshot(t.delta)).state.adds.keys()];
    const files = memoryTableFiles(t.delta, () => daysAfter(0));
    const result = await vacuumTable(
      { now: () => daysAfter(8), delta: t.delta, files },
      { table: 't', retentionMs: 7 * DAY },
    );
    expect(files.deleted).toContain(timed);
    expect(live.every((p) => t.delta.files.has(p))).toBe(true);
    expect(result.filesDeleted).toBeGreaterThanOrEqual(1);
  });
});

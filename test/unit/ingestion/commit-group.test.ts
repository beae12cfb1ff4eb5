import { describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_LIMITS, selectGroup } from '../../../shared/ingestion/commit-group.ts';
import { buildManifest } from '../../../shared/ingestion/manifest.ts';
import type { BatchRecord } from '../../../shared/ingestion/model.ts';

const batch = (batchId: string, fileCount = 10, bytes = 1000, state: BatchRecord['state'] = 'SEALED') =>
  ({
    table: 'orders',
    batchId,
    state,
    fileCount,
    bytes,
    stagedKey: `_staging/orders/${batchId}.json`,
  }) as const;

describe('selectGroup', () => {
  it('puts the requested batch first, then the waiting ones in seal order, skipping itself and non-SEALED', () => {
    const group = selectGroup(
      batch('C'),
      [batch('A'), batch('B', 10, 1000, 'COMMITTED'), batch('C'), batch('D')],
      DEFAULT_GROUP_LIMITS,
    );
    expect(group.map((b) => b.batchId)).toEqual(['C', 'A', 'D']);
  });

  it('stops at the first batch that would pass the file or byte bound, never dropping the requested one', () => {
    const waiting = [batch('A', 5), batch('B', 50), batch('C', 1)];
    expect(
      selectGroup(batch('R', 30), waiting, { ...DEFAULT_GROUP_LIMITS, maxFiles: 40 }).map((b) => b.batchId),
    ).toEqual(['R', 'A']);
    expect(
      selectGroup(batch('R', 10, 900), waiting, { ...DEFAULT_GROUP_LIMITS, maxBytes: 1000 }).map(
        (b) => b.batchId,
      ),
    ).toEqual(['R']);
    expect(selectGroup(batch('R', 99_999), waiting, DEFAULT_GROUP_LIMITS).map((b) => b.batchId)).toEqual([
      'R',
    ]);
  });

  it('never takes more than 99 batches, what one commit transaction can hold with the TABLE item', () => {
    const waiting = Array.from({ length: 150 }, (_, i) => batch(`W${i}`, 1, 1));
    expect(selectGroup(batch('R', 1, 1), waiting, { ...DEFAULT_GROUP_LIMITS, maxBatches: 500 })).toHaveLength(
      99,
    );
    expect(selectGroup(batch('R', 1, 1), waiting, { ...DEFAULT_GROUP_LIMITS, maxBatches: 1 })).toHaveLength(
      1,
    );
  });
});

describe('buildManifest of several staged lists', () => {
  const file = (key: string, size: number) => ({
    bucket: 'landing',
    key,
    size,
    eTag: 'e',
    versionId: null,
    sequencer: null,
    eventTime: 'T',
  });
  it('lists the batches in reservation order and merges their files in the canonical order', () => {
    const lists = [
      { table: 'orders', batchId: 'B2', files: [file('orders/z', 2)] },
      { table: 'orders', batchId: 'B1', files: [file('orders/a', 1), file('orders/m', 3)] },
    ];
    const manifest = buildManifest(lists, 7, 'T');
    expect(manifest).toMatchObject({ version: 7, batchIds: ['B2', 'B1'], fileCount: 3, bytes: 6 });
    expect(manifest.files.map((f) => f.key)).toEqual(['orders/a', 'orders/m', 'orders/z']);
    // A pure function of the reservation and the lists: a rewrite after a crash is byte-identical.
    expect(JSON.stringify(buildManifest(lists, 7, 'T'))).toBe(JSON.stringify(manifest));
  });
});

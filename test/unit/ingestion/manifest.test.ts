import { describe, expect, it } from 'vitest';
import { buildManifest, manifestKey } from '../../../shared/ingestion/manifest.ts';

const file = (key: string, size: number) => ({
  bucket: 'landing',
  key,
  size,
  eTag: 'e',
  versionId: null,
  sequencer: 's',
  eventTime: '2026-11-29T12:00:00.000Z',
});

describe('manifest', () => {
  it('lives at <table>/_manifests/<20-digit version>.json', () => {
    expect(manifestKey('orders', 42)).toBe('orders/_manifests/00000000000000000042.json');
  });

  it('has the contract fields, Redshift entries with decoded keys, and totals', () => {
    const manifest = buildManifest(
      { table: 'orders', batchId: '01B', files: [file('orders/b c+d.json', 10), file('orders/a.json', 5)] },
      3,
      '2026-11-29T12:00:00.000Z',
    );
    expect(manifest).toEqual({
      table: 'orders',
      version: 3,
      committedAt: '2026-11-29T12:00:00.000Z',
      batchIds: ['01B'],
      fileCount: 2,
      bytes: 15,
      files: [file('orders/a.json', 5), file('orders/b c+d.json', 10)],
      entries: [
        { url: 's3://landing/orders/a.json', mandatory: true, meta: { content_length: 5 } },
        { url: 's3://landing/orders/b c+d.json', mandatory: true, meta: { content_length: 10 } },
      ],
    });
  });

  it('is a pure function of the staged list and reservation, so a rewrite is byte-identical', () => {
    const list = { table: 't', batchId: 'B', files: [file('z', 1), file('a', 2)] };
    const reordered = { ...list, files: [...list.files].reverse() };
    expect(JSON.stringify(buildManifest(list, 1, 'T'))).toBe(
      JSON.stringify(buildManifest(reordered, 1, 'T')),
    );
  });

  it("keeps each file's versionId and flags that entries, which cannot name a version, load the current one", () => {
    const v1 = { ...file('orders/a.json', 5), versionId: 'v1' };
    const v2 = { ...file('orders/a.json', 7), versionId: 'v2' };
    const manifest = buildManifest({ table: 'snapshots', batchId: 'B', files: [v2, v1] }, 1, 'T');
    expect(manifest.files.map((f) => f.versionId)).toEqual(['v1', 'v2']);
    // A Redshift COPY manifest url is s3://bucket/key: both entries would load whatever version is current.
    expect(manifest.entries.map((e) => e.url)).toEqual([
      's3://landing/orders/a.json',
      's3://landing/orders/a.json',
    ]);
    expect(manifest.entriesLoadCurrentVersion).toBe(true);
  });

  it('has no version flag when no file has a versionId, and reads a suspended bucket\'s "null" as none', () => {
    const suspended = { ...file('orders/a.json', 5), versionId: 'null' };
    const manifest = buildManifest({ table: 'orders', batchId: 'B', files: [suspended] }, 1, 'T');
    expect(manifest.files[0]?.versionId).toBeNull();
    expect('entriesLoadCurrentVersion' in manifest).toBe(false);
  });
});

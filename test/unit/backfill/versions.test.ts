import { describe, expect, it } from 'vitest';
import { S3ObjectLister } from '../../../shared/backfill/aws/s3-lister.ts';
import type { BackfillDeps } from '../../../shared/backfill/backfill.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { drive } from './drive.ts';
import { type FakeVersion, type MarkerReading, versionsS3 } from './s3-versions-fake.ts';

// allowOverwrites tables are listed with ListObjectVersions (the identity needs the versionId). A page holds
// versions and delete markers alike (MaxKeys counts both), so a page can list no current object at all.

function world(entries: readonly FakeVersion[], reading: MarkerReading, pageSize: number) {
  const s3 = versionsS3(entries, reading);
  const enqueued: string[] = [];
  const deps: BackfillDeps = {
    config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/', allowOverwrites: true }] }),
    landingBucket: 'landing',
    lister: new S3ObjectLister(s3.client),
    ledger: { knownIdentities: async () => new Set<string>() } as unknown as Ledger,
    enqueuer: {
      enqueue: async (files) => void enqueued.push(...files.map((f) => `${f.key}@${f.versionId}`)),
    },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 3, pageSize, stepBudgetMs: 60_000, stepsPerExecution: 50 },
  };
  return { deps, enqueued, requests: s3.requests };
}

const current = (key: string, versionId = `${key}-v2`): FakeVersion => ({ key, versionId, isLatest: true });
const older = (key: string, n = 1): FakeVersion => ({ key, versionId: `${key}-v${2 - n}`, isLatest: false });
const marker = (key: string): FakeVersion => ({
  key,
  versionId: `${key}-dm`,
  isLatest: true,
  deleteMarker: true,
});

describe('a versions listing partition', () => {
  it('ends when the page past its range holds only delete markers (it looped forever, cursor unchanged)', async () => {
    // [orders/a/, orders/b/): three current objects, then 1,500 deleted keys at the start of orders/b/ and a
    // current object after them. Pages of 100 entries: every page after the first is past the range and
    // lists no current object.
    const entries = [
      ...['orders/a/1', 'orders/a/2', 'orders/a/3'].flatMap((k) => [current(k), older(k)]),
      ...Array.from({ length: 1500 }, (_, i) => marker(`orders/b/${String(i).padStart(4, '0')}`)),
      current('orders/b/zz'),
    ];
    for (const reading of ['last-returned', 'first-not-returned'] as const) {
      const { deps, enqueued } = world(entries, reading, 4);
      const { state } = await drive(deps, {
        table: 'orders',
        partitions: [{ prefix: 'orders/', from: 'orders/a/', to: 'orders/b/' }],
      });
      expect(state.next, reading).toBe('done');
      expect(enqueued.sort(), reading).toEqual([
        'orders/a/1@orders/a/1-v2',
        'orders/a/2@orders/a/2-v2',
        'orders/a/3@orders/a/3-v2',
      ]);
    }
  });

  it('lists every current object once under either reading of the markers: it passes both back', async () => {
    // Keys with several versions, delete markers between them, pages of 2 entries: pages end inside a key's
    // versions and exactly at its last one.
    const keys = Array.from({ length: 12 }, (_, i) => `orders/k${String(i).padStart(2, '0')}`);
    const entries = keys.flatMap((k, i) =>
      i % 3 === 0 ? [marker(k), older(k)] : i % 3 === 1 ? [current(k), older(k), older(k, 2)] : [current(k)],
    );
    const expected = keys.filter((_, i) => i % 3 !== 0).map((k) => `${k}@${k}-v2`);
    for (const reading of ['first-not-returned', 'last-returned'] as const) {
      const { deps, enqueued, requests } = world(entries, reading, 2);
      const { state } = await drive(deps, { table: 'orders', partitions: [{ prefix: 'orders/' }] });
      expect(state.next, reading).toBe('done');
      expect(enqueued.sort(), reading).toEqual(expected);
      // Every request after the first carries the pair the previous page named.
      expect(
        requests.slice(1).every((r) => r.KeyMarker !== undefined && r.VersionIdMarker !== undefined),
      ).toBe(true);
    }
  });
});

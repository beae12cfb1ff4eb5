import { describe, expect, it } from 'vitest';
import { S3InventoryReader } from '../../shared/backfill/inventory.ts';
import { InvalidBackfillInput } from '../../shared/backfill/request.ts';
import { S3ObjectLister } from '../../shared/backfill/s3-lister.ts';
import { parsePipelineConfig } from '../../shared/config.ts';
import type { Ledger } from '../../shared/ledger/ledger.ts';
import { MemoryMetrics } from '../../shared/metrics.ts';
import { fileIdentity } from '../../shared/routing.ts';
import type { BackfillDeps } from '../../shared/usecases/backfill.ts';
import { writeInventoryReport } from '../support/inventory.ts';
import { drive } from './backfill-drive.ts';
import { inventoryS3 } from './inventory-s3-fake.ts';

const ALL_VERSIONS = 'Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag';
const MODIFIED = '2026-11-29T10:00:00.000Z';

/** An S3 Inventory report in a fake S3, the pipeline's ledger as a set of identities, the enqueued keys. */
function world(table: Record<string, unknown>, known: readonly string[] = []) {
  const s3 = inventoryS3();
  const enqueued: string[] = [];
  const deps: BackfillDeps = {
    config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/', ...table }] }),
    landingBucket: 'landing',
    lister: new S3ObjectLister(s3.client),
    inventory: new S3InventoryReader(s3.client),
    ledger: {
      knownIdentities: async (_table: string, ids: readonly string[]) =>
        new Set(ids.filter((id) => known.includes(id))),
    } as unknown as Ledger,
    enqueuer: { enqueue: async (files) => void enqueued.push(...files.map((f) => f.key)) },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 2, pageSize: 5, stepBudgetMs: 60_000, stepsPerExecution: 40 },
  };
  const report = (columns: string, rows: readonly string[][], files = 1) =>
    writeInventoryReport(s3.client, {
      destination: 'inv',
      sourceBucket: 'landing',
      prefix: 'inv/landing/all',
      columns,
      rows,
      files,
    });
  return { s3, deps, enqueued, report };
}

const problems = async (run: Promise<unknown>): Promise<readonly string[]> => {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidBackfillInput);
  return (error as InvalidBackfillInput).problems;
};

describe('an inventory report must carry what the table identity needs', () => {
  // allowOverwrites: the identity is the versionId, else the ETag (docs/protocol.md, "Identity"). A live
  // event of a versioned bucket carries the versionId; a "current version only" report has no VersionId
  // column (InventoryConfiguration IncludedObjectVersions), and ETag is an optional field.
  const object = { key: 'orders/k.json', versionId: 'ver-1', eTag: 'etag-1' };
  const live = fileIdentity(
    { allowOverwrites: true },
    { bucket: 'landing', ...object, size: 10, sequencer: null, eventTime: MODIFIED },
  );

  it('refuses, for an allowOverwrites table, a report without VersionId: an object ingested from its live event was enqueued again under a second identity', async () => {
    const { deps, enqueued, report } = world({ allowOverwrites: true }, [live]);
    const manifest = await report('Bucket, Key, Size, LastModifiedDate, ETag', [
      ['landing', object.key, '10', MODIFIED, object.eTag],
    ]);
    const found = await problems(drive(deps, { table: 'orders', inventory: manifest }));
    expect(found.join('\n')).toMatch(/VersionId, IsLatest/);
    expect(found.join('\n')).toMatch(/IncludedObjectVersions: All/);
    expect(enqueued).toEqual([]);
  });

  it('refuses, for an allowOverwrites table, a report without ETag (objects with no version are identified by it)', async () => {
    const { deps, report } = world({ allowOverwrites: true });
    const manifest = await report('Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size', [
      ['landing', object.key, object.versionId, 'true', 'false', '10'],
    ]);
    const found = await problems(drive(deps, { table: 'orders', inventory: manifest }));
    expect(found.join('\n')).toMatch(/ETag/);
    expect(found.join('\n')).toMatch(/OptionalFields: ETag/);
  });

  it('takes a full report for an allowOverwrites table: the object ingested live is already ingested, not enqueued', async () => {
    const { deps, enqueued, report } = world({ allowOverwrites: true }, [live]);
    const manifest = await report(ALL_VERSIONS, [
      ['landing', object.key, object.versionId, 'true', 'false', '10', MODIFIED, object.eTag],
      ['landing', 'orders/new.json', 'ver-9', 'true', 'false', '10', MODIFIED, 'etag-9'],
    ]);
    const { state } = await drive(deps, { table: 'orders', inventory: manifest });
    expect(state.summary).toMatchObject({ complete: true, alreadyIngested: 1, enqueued: 1 });
    expect(enqueued).toEqual(['orders/new.json']);
  });

  it('takes a current-version report with Bucket and Key only for a table with path identity', async () => {
    const { deps, enqueued, report } = world({});
    const manifest = await report('Bucket, Key', [['landing', 'orders/a.json']]);
    const { state } = await drive(deps, { table: 'orders', inventory: manifest });
    expect(state.summary).toMatchObject({ complete: true, enqueued: 1 });
    expect(enqueued).toEqual(['orders/a.json']);
  });
});

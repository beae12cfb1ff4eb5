import { describe, expect, it } from 'vitest';
import { resumeHint } from '../../../cli/backfill/run-view.ts';
import { S3InventoryReader } from '../../../shared/backfill/aws/s3-inventory-reader.ts';
import { S3ObjectLister } from '../../../shared/backfill/aws/s3-lister.ts';
import type { BackfillDeps } from '../../../shared/backfill/backfill.ts';
import { inventoryPartitions } from '../../../shared/backfill/inventory-source.ts';
import { InvalidBackfillInput } from '../../../shared/backfill/request.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import { fileIdentity } from '../../../shared/ingestion/routing.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { ALL_VERSIONS_SCHEMA, writeInventoryReport } from '../../support/inventory.ts';
import { drive } from './drive.ts';
import { inventoryS3 } from './inventory-s3-fake.ts';

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
    const manifest = await report(ALL_VERSIONS_SCHEMA, [
      ['landing', object.key, object.versionId, 'true', 'false', '10', MODIFIED, object.eTag],
      ['landing', 'orders/new.json', 'ver-9', 'true', 'false', '10', MODIFIED, 'etag-9'],
    ]);
    const { state } = await drive(deps, { table: 'orders', inventory: manifest });
    expect(state.summary).toMatchObject({ complete: true, alreadyIngested: 1, enqueued: 1 });
    expect(enqueued).toEqual(['orders/new.json']);
  });

  it("refuses a report of another bucket than the table's (it would list none of its objects)", async () => {
    const { s3, deps } = world({});
    const manifest = await writeInventoryReport(s3.client, {
      destination: 'inv',
      sourceBucket: 'elsewhere',
      prefix: 'inv/elsewhere/all',
      columns: 'Bucket, Key',
      rows: [['elsewhere', 'orders/a.json']],
      files: 1,
    });
    expect(await problems(drive(deps, { table: 'orders', inventory: manifest }))).toEqual([
      'inventory: the report lists bucket elsewhere; table orders reads landing',
    ]);
  });

  it('takes a current-version report with Bucket and Key only for a table with path identity', async () => {
    const { deps, enqueued, report } = world({});
    const manifest = await report('Bucket, Key', [['landing', 'orders/a.json']]);
    const { state } = await drive(deps, { table: 'orders', inventory: manifest });
    expect(state.summary).toMatchObject({ complete: true, enqueued: 1 });
    expect(enqueued).toEqual(['orders/a.json']);
  });
});

describe('a damaged inventory report', () => {
  const keysOf = (file: number) =>
    Array.from({ length: 12 }, (_, r) => `orders/f${file}-${String(r).padStart(2, '0')}.json`);
  const rows = [0, 1, 2].flatMap((f) => keysOf(f).map((k) => ['landing', k]));

  it('is refused at Plan when manifest.json does not match manifest.checksum', async () => {
    const { s3, deps, report } = world({});
    const manifest = await report('Bucket, Key', rows, 3);
    const checksumKey = manifest.replace('s3://inv/', '').replace('manifest.json', 'manifest.checksum');
    s3.put('inv', checksumKey, { body: Buffer.from('0'.repeat(32)) });
    await expect(drive(deps, { table: 'orders', inventory: manifest })).rejects.toThrow(
      /manifest\.checksum says 0{32}: incomplete or not the report S3 wrote/,
    );
  });

  it('a truncated data file fails only its partition; the resume continues that file from its row once it is whole', async () => {
    const { s3, deps, enqueued } = world({});
    // A report whose manifest names no sizes or MD5s: only gzip itself can tell the file is cut.
    const manifest = await writeInventoryReport(s3.client, {
      destination: 'inv',
      sourceBucket: 'landing',
      prefix: 'inv/landing/all',
      columns: 'Bucket, Key',
      rows,
      files: 3,
      bareFiles: true,
    });
    const damaged = 'inv/landing/all/data/1.csv.gz';
    const whole = s3.get('inv', damaged)?.body as Buffer;
    s3.put('inv', damaged, { body: whole.subarray(0, whole.length - 12) });
    const input = { table: 'orders', inventory: manifest };
    const { state: failed } = await drive(deps, input);
    expect(failed.next).toBe('failed');
    expect(failed.failure?.Error).toBe('InventoryReportError');
    expect(failed.failure?.Cause).toMatch(/data\/1\.csv\.gz is not a complete gzip file/);
    // The other files are done; the damaged one's rows up to the failed step are too.
    expect(enqueued).toEqual(expect.arrayContaining([...keysOf(0), ...keysOf(2)]));
    const hint = resumeHint(input, failed.summary);
    const resume = JSON.parse(/this input: (\{.*\})$/.exec(hint)?.[1] ?? '{}') as Record<string, unknown>;
    expect(resume.partitions).toHaveLength(1);

    s3.put('inv', damaged, { body: whole });
    const before = enqueued.length;
    const { state } = await drive(deps, resume);
    expect(state.summary.complete).toBe(true);
    const again = enqueued.slice(before);
    expect(again.length).toBeGreaterThan(0);
    expect(again.length).toBeLessThan(12);
    expect(enqueued.sort()).toEqual(rows.map((r) => r[1]).sort());
  });
});

describe('inventory partitions are ranges of data files', () => {
  it('splits a report of many files into at most 2 x concurrency partitions, each reading its files in turn', async () => {
    const { deps, enqueued, report } = world({});
    const rows = Array.from({ length: 7 * 4 }, (_, i) => [
      'landing',
      `orders/${String(i).padStart(3, '0')}.json`,
    ]);
    const manifest = await report('Bucket, Key', rows, 7);
    const { state } = await drive(deps, { table: 'orders', inventory: manifest, concurrency: 1 });
    expect(state.summary).toMatchObject({ complete: true, partitions: 2, listed: 28, enqueued: 28 });
    expect(enqueued.sort()).toEqual(rows.map((r) => r[1]));
  });

  it('covers every file exactly once, however many', () => {
    const manifest = {
      sourceBucket: 'landing',
      md5: 'f'.repeat(32),
      columns: ['Bucket', 'Key'],
      files: Array.from({ length: 3001 }, (_, i) => ({ key: `d/${i}.csv.gz` })),
    };
    for (const count of [1, 7, 80, 5000]) {
      const partitions = inventoryPartitions(manifest, 'orders/', count);
      expect(partitions.length).toBe(Math.min(count, 3001));
      const owners = manifest.files.map(
        (_, i) => partitions.filter((p) => (p.file ?? 0) <= i && i < (p.fileEnd ?? 0)).length,
      );
      expect(owners.every((n) => n === 1)).toBe(true);
    }
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { S3InventoryReader } from '../../../../shared/backfill/aws/s3-inventory-reader.ts';
import { RETRYABLE_ERRORS, taskError } from '../../../../shared/backfill/backfill-handler.ts';
import { InventoryReportError } from '../../../../shared/backfill/inventory-report.ts';
import { UnknownOutcomeError } from '../../../../shared/kernel/errors.ts';
import { ALL_VERSIONS_COLUMNS } from '../../../support/inventory.ts';
import { inventoryS3 } from '../inventory-s3-fake.ts';

const filter = { bucket: 'landing', prefix: 'orders/' };
const key = (i: number) => `orders/2026/11/29/${String(i).padStart(7, '0')}.json`;

describe('S3 Inventory data files are streamed', () => {
  it('reads a page near the end of a data file bigger than a string can hold, holding a page', async () => {
    // 285 gzip members of 10,000 rows (a gzip file may be several members, one after the other): 544 MB of
    // CSV, past V8's longest string (2^29 - 24 characters), made as it is read. Rows of all versions' columns.
    const version = '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo';
    const block = Array.from(
      { length: 10_000 },
      (_, i) =>
        `"landing","${key(i)}","${version}","true","false","1024","2026-11-29T10:00:00.000Z","d41d8cd98f00b204e9800998ecf8427e"\n`,
    );
    const member = gzipSync(block.join(''), { level: 1 });
    const members = 285;
    const md5 = createHash('md5');
    for (let i = 0; i < members; i++) md5.update(member);
    const s3 = inventoryS3();
    s3.put('inv', 'data/big.csv.gz', {
      size: member.length * members,
      body: async function* () {
        for (let i = 0; i < members; i++) yield member;
      },
    });
    const reader = new S3InventoryReader(s3.client);
    const file = {
      bucket: 'inv',
      key: 'data/big.csv.gz',
      columns: ALL_VERSIONS_COLUMNS,
      size: member.length * members,
      md5: md5.digest('hex'),
    };
    const rows = 10_000 * members;
    const before = process.memoryUsage().rss;
    const page = await reader.page(file, filter, rows - 5, 10);
    expect(page.objects.map((o) => o.key)).toEqual([9995, 9996, 9997, 9998, 9999].map(key));
    expect(page).toMatchObject({ rows: 5, more: false });
    // Far less than the file (the old reader held it compressed, decompressed and split at once).
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  }, 60_000);
});

describe('S3 Inventory data files are checked', () => {
  const rows = Array.from({ length: 30 }, (_, i) => `"landing","${key(i)}"`);
  const body = gzipSync(`${rows.join('\n')}\n`);
  const md5 = createHash('md5').update(body).digest('hex');
  const file = { bucket: 'inv', key: 'data/0.csv.gz', columns: ['Bucket', 'Key'] };
  const reader = (object: Buffer = body) => {
    const s3 = inventoryS3();
    s3.put('inv', file.key, { body: object });
    return { s3, reader: new S3InventoryReader(s3.client) };
  };
  const keys = (page: { objects: readonly { key: string }[] }) => page.objects.map((o) => o.key);
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: Error) => e,
    );

  it('reads on from an open body page after page, and opens it again at its row when S3 closed it', async () => {
    // Rows that do not compress away, served 1 KiB at a time: the body is still flowing between pages.
    const many = Array.from(
      { length: 3000 },
      (_, i) => `"landing","${key(i)}","${randomBytes(16).toString('hex')}"`,
    );
    const big = gzipSync(`${many.join('\n')}\n`);
    const s3 = inventoryS3({ chunkBytes: 1024 });
    s3.put('inv', file.key, { body: big });
    const r = new S3InventoryReader(s3.client);
    const sized = {
      ...file,
      columns: ['Bucket', 'Key', 'ETag'],
      size: big.length,
      md5: createHash('md5').update(big).digest('hex'),
    };
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => key(from + i));
    expect(keys(await r.page(sized, filter, 0, 1000))).toEqual(range(0, 1000));
    expect(keys(await r.page(sized, filter, 1000, 1000))).toEqual(range(1000, 2000));
    expect(s3.gets).toHaveLength(1);
    s3.breakOpenBodies();
    const last = await r.page(sized, filter, 2000, 1000);
    expect(keys(last)).toEqual(range(2000, 3000));
    expect(last).toMatchObject({ rows: 1000, more: false });
    expect(s3.gets).toHaveLength(2);
  });

  it('a connection lost mid-body is retryable (UnknownOutcomeError: the state machine retries the step)', async () => {
    const { s3, reader: r } = reader();
    s3.cutNextGet('inv', file.key, 20);
    const error = await failure(r.page(file, filter, 0, 10));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(taskError(error).name).toBe(RETRYABLE_ERRORS.transient);
    expect(keys(await r.page(file, filter, 0, 10))).toHaveLength(10);
  });

  it('refuses a data file of another size than the manifest states, before reading a row', async () => {
    const { reader: r } = reader();
    const error = await failure(r.page({ ...file, size: body.length + 1, md5 }, filter, 0, 10));
    expect(error).toBeInstanceOf(InventoryReportError);
    expect(error.message).toMatch(/is \d+ bytes, the manifest says \d+: not the file the report lists/);
    expect(taskError(error).name).toBe('InventoryReportError');
  });

  it('refuses a data file whose MD5 is not the manifest MD5checksum, once it has read it whole', async () => {
    const { reader: r } = reader();
    const wrong = { ...file, size: body.length, md5: '0'.repeat(32) };
    expect((await r.page(wrong, filter, 0, 10)).more).toBe(true);
    const error = await failure(r.page(wrong, filter, 10, 100));
    expect(error).toBeInstanceOf(InventoryReportError);
    expect(error.message).toMatch(/MD5checksum/);
  });

  it('a truncated gzip file is an InventoryReportError naming the row it reached (not retryable: S3 serves the same bytes)', async () => {
    const { reader: r } = reader(body.subarray(0, body.length - 30));
    const error = await failure(r.page(file, filter, 0, 100));
    expect(error).toBeInstanceOf(InventoryReportError);
    expect(error.message).toMatch(/is not a complete gzip file \(unexpected end of file\) after row \d+/);
  });
});

import { gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/**
 * Writes an S3 Inventory report as S3 writes one
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/storage-inventory-location.html): gzip CSV data files,
 * every field quoted, and manifest.json naming them and their columns. Returns the manifest's s3:// URL, what
 * `inlet backfill start --inventory` takes. Used by the inventory integration test and the backfill bench.
 */
export async function writeInventoryReport(
  s3: S3Client,
  report: {
    readonly destination: string;
    readonly sourceBucket: string;
    /** The report's folder in the destination: `<prefix>/<YYYY-MM-DDTHH-MMZ>/manifest.json`, `<prefix>/data/`. */
    readonly prefix: string;
    /** fileSchema, e.g. `Bucket, Key, Size, LastModifiedDate, ETag`. */
    readonly columns: string;
    readonly rows: readonly (readonly string[])[];
    readonly files: number;
    readonly createdAt?: Date;
  },
): Promise<string> {
  const createdAt = report.createdAt ?? new Date('2026-11-30T01:00:00Z');
  const base = `${report.prefix}/${createdAt.toISOString().slice(0, 16).replace(':', '-')}Z`;
  const keys: string[] = [];
  const per = Math.ceil(report.rows.length / report.files);
  for (let i = 0; i < report.files; i++) {
    const key = `${report.prefix}/data/${i}.csv.gz`;
    const csv = report.rows.slice(i * per, (i + 1) * per).map((r) => r.map((f) => `"${f}"`).join(','));
    await s3.send(
      new PutObjectCommand({ Bucket: report.destination, Key: key, Body: gzipSync(`${csv.join('\n')}\n`) }),
    );
    keys.push(key);
  }
  await s3.send(
    new PutObjectCommand({
      Bucket: report.destination,
      Key: `${base}/manifest.json`,
      Body: JSON.stringify({
        sourceBucket: report.sourceBucket,
        destinationBucket: `arn:aws:s3:::${report.destination}`,
        version: '2016-11-30',
        creationTimestamp: String(createdAt.getTime()),
        fileFormat: 'CSV',
        fileSchema: report.columns,
        files: keys.map((key) => ({ key, size: 1, MD5checksum: '0' })),
      }),
    }),
  );
  return `s3://${report.destination}/${base}/manifest.json`;
}

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** The fileSchema of a report of all versions with the fields an allowOverwrites table needs. */
export const ALL_VERSIONS_SCHEMA =
  'Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag';
/** Its columns, as the backfill reads them from the manifest. */
export const ALL_VERSIONS_COLUMNS = ALL_VERSIONS_SCHEMA.split(', ');

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
    /** Leave `size` and `MD5checksum` out of the manifest's file entries. */
    readonly bareFiles?: boolean;
  },
): Promise<string> {
  const createdAt = report.createdAt ?? new Date('2026-11-30T01:00:00Z');
  const base = `${report.prefix}/${createdAt.toISOString().slice(0, 16).replace(':', '-')}Z`;
  const files: Array<{ key: string; size?: number; MD5checksum?: string }> = [];
  const per = Math.ceil(report.rows.length / report.files);
  for (let i = 0; i < report.files; i++) {
    const key = `${report.prefix}/data/${i}.csv.gz`;
    const csv = report.rows.slice(i * per, (i + 1) * per).map((r) => r.map((f) => `"${f}"`).join(','));
    const body = gzipSync(`${csv.join('\n')}\n`);
    await s3.send(new PutObjectCommand({ Bucket: report.destination, Key: key, Body: body }));
    files.push(
      report.bareFiles
        ? { key }
        : { key, size: body.length, MD5checksum: createHash('md5').update(body).digest('hex') },
    );
  }
  const manifest = JSON.stringify({
    sourceBucket: report.sourceBucket,
    destinationBucket: `arn:aws:s3:::${report.destination}`,
    version: '2016-11-30',
    creationTimestamp: String(createdAt.getTime()),
    fileFormat: 'CSV',
    fileSchema: report.columns,
    files,
  });
  await s3.send(
    new PutObjectCommand({ Bucket: report.destination, Key: `${base}/manifest.json`, Body: manifest }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: report.destination,
      Key: `${base}/manifest.checksum`,
      Body: createHash('md5').update(manifest).digest('hex'),
    }),
  );
  return `s3://${report.destination}/${base}/manifest.json`;
}

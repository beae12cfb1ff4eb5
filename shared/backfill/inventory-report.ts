// What an S3 Inventory report is (https://docs.aws.amazon.com/AmazonS3/latest/userguide/storage-inventory-location.html):
// manifest.json (its columns, its data files), manifest.checksum (the MD5 of manifest.json), and gzip CSV data
// files, one object version per line. Reading them from S3 is the adapter's (aws/s3-inventory-reader.ts); what they must
// hold, and what a row means, is here.
import { createHash } from 'node:crypto';
import { CsvParser } from '../kernel/csv.ts';
import { InletError } from '../kernel/errors.ts';
import * as z from '../kernel/zod.ts';
import type { ListedObject } from './ports.ts';

/**
 * A report that cannot be read as one: a checksum that does not match, a data file that is not the one the
 * manifest lists or not a complete gzip file, a malformed row. Not retryable: S3 serves the same bytes again.
 * A step that meets it fails its partition only; the run reports every partition's resume point.
 */
export class InventoryReportError extends InletError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: false, cause });
    this.name = 'InventoryReportError';
  }
}

const manifestSchema = z.object({
  sourceBucket: z.string(),
  fileFormat: z.string(),
  /** Comma-separated column names, e.g. "Bucket, Key, Size, LastModifiedDate, ETag". */
  fileSchema: z.string(),
  files: z.array(
    z.object({
      key: z.string(),
      /** Bytes of the data file as stored (gzip). */
      size: z.optional(z.number()),
      /** MD5 of the data file as stored, hex. */
      MD5checksum: z.optional(z.string()),
    }),
  ),
});

/** One data file as the manifest lists it. */
export interface InventoryDataFile {
  readonly key: string;
  readonly size?: number;
  readonly md5?: string;
}

export interface InventoryManifest {
  readonly sourceBucket: string;
  /** MD5 of manifest.json (hex), as manifest.checksum states it: names this report. */
  readonly md5: string;
  /** The data files' columns, in order (fileSchema). */
  readonly columns: readonly string[];
  /** In the report's own bucket. */
  readonly files: readonly InventoryDataFile[];
}

/**
 * manifest.json, checked against manifest.checksum ("the MD5 of the content of the manifest.json file",
 * written beside every manifest.json): a manifest that does not match it is refused.
 */
export function parseManifest(name: string, bytes: Buffer, checksum: string): InventoryManifest {
  const md5 = createHash('md5').update(bytes).digest('hex');
  const stated = checksum.trim().toLowerCase();
  if (md5 !== stated)
    throw new InventoryReportError(
      `inventory manifest ${name}: its MD5 is ${md5}, manifest.checksum says ${stated || '(empty)'}: incomplete or not the report S3 wrote`,
    );
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InventoryReportError(`inventory manifest ${name} is not JSON`, error);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success)
    throw new InventoryReportError(`inventory manifest ${name} is not an S3 Inventory manifest`);
  const manifest = parsed.data;
  if (manifest.fileFormat.toUpperCase() !== 'CSV')
    throw new InventoryReportError(`inventory format ${manifest.fileFormat}: only CSV reports are read`);
  const columns = manifest.fileSchema.split(',').map((c) => c.trim());
  for (const required of ['Bucket', 'Key'])
    if (!columns.includes(required))
      throw new InventoryReportError(`inventory fileSchema has no ${required} column`);
  return {
    sourceBucket: manifest.sourceBucket,
    md5,
    columns,
    files: manifest.files.map((f) => ({
      key: f.key,
      ...(f.size !== undefined ? { size: f.size } : {}),
      ...(f.MD5checksum !== undefined ? { md5: f.MD5checksum } : {}),
    })),
  };
}

/**
 * What a report must hold for a table's file identity (docs/protocol.md, "Identity"), or every object gets a
 * second identity beside its live event's and is ingested again. Path identity needs Bucket and Key only.
 * allowOverwrites needs the versionId, which only a report of all versions has (`IncludedObjectVersions:
 * All` adds VersionId, IsLatest and IsDeleteMarker; `Current` has none of them), and the ETag (an optional
 * field), which identifies objects that have no version: written before versioning was enabled, while it
 * was suspended, or in an unversioned bucket
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_InventoryConfiguration.html).
 */
export function identityColumnProblems(
  columns: readonly string[],
  table: { readonly name: string; readonly allowOverwrites: boolean },
): string[] {
  if (!table.allowOverwrites) return [];
  const missing = ['VersionId', 'IsLatest', 'ETag'].filter((c) => !columns.includes(c));
  if (missing.length === 0) return [];
  const current = missing.includes('VersionId') ? ' (a report of current versions only)' : '';
  return [
    `inventory: table '${table.name}' has allowOverwrites: an object's identity is its versionId, else its ETag, ` +
      `and the report's fileSchema has no ${missing.join(', ')}${current}; backfilling from it would ingest ` +
      'objects again under a second identity. Configure the inventory with IncludedObjectVersions: All and ' +
      'OptionalFields: ETag (console: "Include all versions" and the ETag field) and use its next report, or ' +
      'backfill by listing (no inventory)',
  ];
}

/**
 * One line of a data file into its fields (the project's one CSV parser): S3 Inventory quotes every field,
 * doubling quotes inside, and URL-encodes keys, so a row never spans lines.
 */
export function parseCsvLine(line: string): string[] {
  const csv = new CsvParser();
  const rows = [...csv.write(line)];
  const end = csv.end();
  if (end.kind === 'unterminated') throw new InventoryReportError('inventory: unterminated quoted field');
  if (end.row) rows.push(end.row);
  if (rows.length > 1) throw new InventoryReportError('inventory: a line break in a row');
  return [...(rows[0]?.fields ?? [''])];
}

/**
 * A data file's line as a listed object: a current object of `filter.bucket` under `filter.prefix`, or
 * undefined (another bucket or prefix, an older version, a delete marker). Keys are URL-encoded, `+` for a
 * space.
 */
export function inventoryRow(
  line: string,
  columns: ReadonlyMap<string, number>,
  filter: { readonly bucket: string; readonly prefix: string },
): ListedObject | undefined {
  const fields = parseCsvLine(line);
  const at = (name: string) => {
    const index = columns.get(name);
    return index === undefined ? undefined : fields[index];
  };
  if (at('Bucket') !== filter.bucket) return undefined;
  if (at('IsLatest') === 'false' || at('IsDeleteMarker') === 'true') return undefined;
  let key: string;
  try {
    key = decodeURIComponent((at('Key') ?? '').replace(/\+/g, ' '));
  } catch (error) {
    throw new InventoryReportError(`inventory: key '${at('Key')}' is not URL-encoded`, error);
  }
  if (!key.startsWith(filter.prefix)) return undefined;
  const modified = at('LastModifiedDate');
  const time = modified ? Date.parse(modified) : 0;
  if (Number.isNaN(time))
    throw new InventoryReportError(`inventory: LastModifiedDate '${modified}' of ${key} is not a date`);
  return {
    key,
    size: Number(at('Size') ?? 0),
    eTag: at('ETag') || null,
    versionId: at('VersionId') || null,
    lastModified: new Date(time).toISOString(),
  };
}

import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError, DefiniteFailureError } from '../errors.ts';
import * as z from '../zod.ts';
import type { ListedObject, ListPage } from './ports.ts';

/**
 * An S3 Inventory report's manifest.json (https://docs.aws.amazon.com/AmazonS3/latest/userguide/storage-inventory-location.html):
 * the data files and the columns they hold, in order.
 */
const manifestSchema = z.object({
  sourceBucket: z.string(),
  fileFormat: z.string(),
  /** Comma-separated column names, e.g. "Bucket, Key, Size, LastModifiedDate, ETag". */
  fileSchema: z.string(),
  files: z.array(z.object({ key: z.string() })),
});

export interface InventoryManifest {
  readonly sourceBucket: string;
  /** Data file keys, in the report's own bucket. */
  readonly files: readonly string[];
  /** The data files' columns, in order (fileSchema). */
  readonly columns: readonly string[];
}

export interface InventoryLocation {
  readonly bucket: string;
  readonly key: string;
}

/** Reads an S3 Inventory report instead of listing the bucket. */
export interface InventoryReader {
  manifest(location: InventoryLocation): Promise<InventoryManifest>;
  /**
   * Up to `limit` rows of one data file from row `row`: the current objects of `filter.bucket` under
   * `filter.prefix` among them, and how many rows were read (the partition's cursor).
   */
  page(
    file: InventoryLocation & { readonly columns: readonly string[] },
    filter: { readonly bucket: string; readonly prefix: string },
    row: number,
    limit: number,
  ): Promise<ListPage>;
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
  return [
    `inventory: table '${table.name}' has allowOverwrites: an object's identity is its versionId, else its ETag, ` +
      `and the report's fileSchema has no ${missing.join(', ')}${missing.includes('VersionId') ? ' (a report of current versions only)' : ''}; ` +
      'backfilling from it would ingest objects again under a second identity. Configure the inventory with ' +
      'IncludedObjectVersions: All and OptionalFields: ETag (console: "Include all versions" and the ETag ' +
      'field) and use its next report, or backfill by listing (no inventory)',
  ];
}

/** One CSV line into fields: S3 Inventory quotes every field ("a","b"), doubling quotes inside. */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote < 0) throw new DefiniteFailureError('inventory: unterminated quoted field');
        value += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      fields.push(value);
      i++; // the comma
    } else {
      const comma = line.indexOf(',', i);
      const end = comma < 0 ? line.length : comma;
      fields.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return fields;
}

type Rows = { readonly columns: Map<string, number>; readonly lines: readonly string[] };

/**
 * CSV reports (gzip, one object per line, keys URL-encoded as the inventory docs say). A step reads its
 * file once and keeps it: the next steps of the same partition, on a warm Lambda, page through memory.
 */
export class S3InventoryReader implements InventoryReader {
  private cached?: { readonly file: string; readonly rows: Rows };

  constructor(private readonly client: S3Client) {}

  async manifest(location: InventoryLocation): Promise<InventoryManifest> {
    const parsed = manifestSchema.safeParse(JSON.parse((await this.get(location)).toString('utf8')));
    if (!parsed.success)
      throw new DefiniteFailureError(`inventory manifest s3://${location.bucket}/${location.key} is not one`);
    if (parsed.data.fileFormat.toUpperCase() !== 'CSV')
      throw new DefiniteFailureError(`inventory format ${parsed.data.fileFormat}: only CSV reports are read`);
    const columns = parsed.data.fileSchema.split(',').map((c) => c.trim());
    for (const required of ['Bucket', 'Key'])
      if (!columns.includes(required))
        throw new DefiniteFailureError(`inventory fileSchema has no ${required} column`);
    return { sourceBucket: parsed.data.sourceBucket, files: parsed.data.files.map((f) => f.key), columns };
  }

  async page(
    file: InventoryLocation & { readonly columns: readonly string[] },
    filter: { readonly bucket: string; readonly prefix: string },
    row: number,
    limit: number,
  ): Promise<ListPage> {
    const { columns, lines } = await this.rows(file);
    const at = (fields: string[], name: string) => {
      const index = columns.get(name);
      return index === undefined ? undefined : fields[index];
    };
    const slice = lines.slice(row, row + limit);
    const objects: ListedObject[] = [];
    for (const line of slice) {
      const fields = parseCsvLine(line);
      if (at(fields, 'Bucket') !== filter.bucket) continue;
      if (at(fields, 'IsLatest') === 'false' || at(fields, 'IsDeleteMarker') === 'true') continue;
      const key = decodeURIComponent((at(fields, 'Key') ?? '').replace(/\+/g, ' '));
      if (!key.startsWith(filter.prefix)) continue;
      const versionId = at(fields, 'VersionId');
      const modified = at(fields, 'LastModifiedDate');
      objects.push({
        key,
        size: Number(at(fields, 'Size') ?? 0),
        eTag: at(fields, 'ETag') || null,
        versionId: versionId || null,
        lastModified: modified ? new Date(modified).toISOString() : new Date(0).toISOString(),
      });
    }
    return { objects, rows: slice.length, more: row + slice.length < lines.length };
  }

  private async rows(file: InventoryLocation & { readonly columns: readonly string[] }): Promise<Rows> {
    const id = `${file.bucket}/${file.key}`;
    if (this.cached?.file === id) return this.cached.rows;
    const names = file.columns;
    const body = await this.get(file);
    const text = gunzipSync(body).toString('utf8');
    const rows = {
      columns: new Map(names.map((name, i) => [name, i])),
      lines: text.split('\n').filter((l) => l.length > 0),
    };
    this.cached = { file: id, rows };
    return rows;
  }

  private async get(location: InventoryLocation): Promise<Buffer> {
    try {
      const result = await this.client.send(
        new GetObjectCommand({ Bucket: location.bucket, Key: location.key }),
      );
      return Buffer.from((await result.Body?.transformToByteArray()) ?? []);
    } catch (error) {
      throw classifyAwsError(`read inventory s3://${location.bucket}/${location.key}`, error);
    }
  }
}

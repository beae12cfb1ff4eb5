import {
  type AsyncBuffer,
  type FileMetaData,
  type ParquetParsers,
  parquetMetadataAsync,
  parquetRead,
  parquetSchema,
  type SchemaElement,
} from 'hyparquet';
import type { BronzeType } from './delta-types.ts';
import { Bad, type FieldReader, NotUtf8 } from './parquet-leaves.ts';
import { fieldReader } from './parquet-types.ts';
import type { SourceRecord } from './records.ts';
import type { Column } from './schema.ts';
import { Unstorable } from './values.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const text = (bytes: Uint8Array) => {
  try {
    return utf8.decode(bytes);
  } catch {
    return new NotUtf8(bytes);
  }
};
const raw = <T>(v: T) => v;

/**
 * hyparquet's decoders, made lossless: by default it turns timestamps into millisecond Dates (dropping
 * microseconds and nanoseconds), dates into Dates, and text with invalid UTF-8 into U+FFFD. Here they
 * return the stored integers (days, or units since the epoch; INT96 as nanoseconds) and refuse bad UTF-8,
 * and parquet-types.ts maps each to its Delta cell.
 */
const PARSERS: Partial<ParquetParsers> = {
  timestampFromMilliseconds: raw,
  timestampFromMicroseconds: raw,
  timestampFromNanoseconds: raw,
  dateFromDays: raw,
  stringFromBytes: text,
  jsonFromBytes: text,
  geometryFromBytes: raw,
  geographyFromBytes: raw,
};

/**
 * The file's metadata as the raw read sees it: DECIMAL unannotated (hyparquet would return a rounded double;
 * this gives the unscaled integer or bytes), MAP unannotated (hyparquet would key a plain object by each key's
 * text, losing a `__proto__` key and the key's type; this gives the `key_value` entries), BSON and INTERVAL
 * unannotated (hyparquet refuses them), VARIANT unannotated (its raw parts are kept), and every field
 * renamed to its position (`c0`... at the top, `f0`... inside), so duplicate or `__proto__` names cannot
 * collide in the objects hyparquet builds. Column chunks are found by path, so their paths follow.
 */
function rawReadMetadata(metadata: FileMetaData): FileMetaData {
  const strip = new Set(['DECIMAL', 'MAP', 'MAP_KEY_VALUE', 'BSON', 'INTERVAL', 'VARIANT']);
  const schema: SchemaElement[] = [];
  const paths = new Map<string, string[]>();
  let index = 0;
  const walk = (original: string[], renamed: string[], position: number, top: boolean) => {
    const element = metadata.schema[index++] as SchemaElement;
    const name = top ? `c${position}` : `f${position}`;
    const copy: SchemaElement = { ...element, name };
    if (copy.converted_type && strip.has(copy.converted_type)) copy.converted_type = undefined;
    if (copy.logical_type && strip.has(copy.logical_type.type)) copy.logical_type = undefined;
    schema.push(copy);
    const from = [...original, element.name];
    const to = [...renamed, name];
    if (!element.num_children) paths.set(from.join('\u0000'), to);
    for (let i = 0; i < (element.num_children ?? 0); i++) walk(from, to, i, false);
  };
  const root = metadata.schema[index++] as SchemaElement;
  schema.push(root);
  for (let i = 0; i < (root.num_children ?? 0); i++) walk([], [], i, true);
  return {
    ...metadata,
    schema,
    row_groups: metadata.row_groups.map((group) => ({
      ...group,
      columns: group.columns.map((chunk) => {
        const path = chunk.meta_data && paths.get(chunk.meta_data.path_in_schema.join('\u0000'));
        return path && chunk.meta_data
          ? { ...chunk, meta_data: { ...chunk.meta_data, path_in_schema: path } }
          : chunk;
      }),
    })),
  };
}

/** Top-level names as record keys: a repeated name gets `_2`, `_3`... (as a repeated CSV header does). */
function uniqueNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name}_${n}`;
  });
}

/**
 * The records of one Parquet landing file: first its columns with their declared Delta types (so the schema
 * comes from the file's own schema, not from inference), then its rows, read one row group at a time over
 * ranged reads, so memory is bounded by a row group rather than the file. A value no Delta type holds
 * exactly is an Unstorable with its exact text. A file that is not Parquet, or a row group that cannot be
 * decoded, becomes one rescued record with the reason; nothing is dropped silently.
 */
export async function* parquetRecords(file: AsyncBuffer): AsyncGenerator<SourceRecord> {
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(file, { geoparquet: false });
  } catch (error) {
    yield {
      kind: 'corrupt',
      raw: `<${file.byteLength} bytes>`,
      reason: `not a Parquet file: ${(error as Error).message}`,
    };
    return;
  }
  const nodes = parquetSchema(metadata).children;
  const readers: FieldReader[] = nodes.map((node) => fieldReader(node));
  const names = uniqueNames(nodes.map((node) => node.element.name));
  const types = new Map<string, BronzeType>();
  readers.forEach((r, i) => {
    if (r.type !== undefined) types.set(names[i] as string, r.type);
  });
  const columns: Column[] = [...types].map(([name, type]) => ({ name, type }));
  yield { kind: 'columns', columns };
  const readable = rawReadMetadata(metadata);
  let rowStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: unknown[][];
    try {
      rows = await new Promise<unknown[][]>((resolve, reject) => {
        parquetRead({
          file,
          metadata: readable,
          rowStart,
          rowEnd,
          utf8: false,
          geoparquet: false,
          parsers: PARSERS,
          onComplete: (r) => resolve(r as unknown[][]),
        }).catch(reject);
      });
    } catch (error) {
      yield {
        kind: 'corrupt',
        raw: `<row group ${index}: rows ${rowStart}-${rowEnd - 1}>`,
        reason: `unreadable Parquet row group: ${(error as Error).message}`,
      };
      rowStart = rowEnd;
      continue;
    }
    for (const row of rows) yield { kind: 'row', values: cells(row, readers, names), types };
    rowStart = rowEnd;
  }
}

function cells(
  row: unknown[],
  readers: readonly FieldReader[],
  names: readonly string[],
): Record<string, unknown> {
  const values: Record<string, unknown> = Object.create(null);
  for (let i = 0; i < readers.length; i++) {
    const reader = readers[i] as FieldReader;
    const rawValue = row[i];
    let cell = reader.type === undefined ? new Bad(reader.problem ?? 'no Delta type') : reader.read(rawValue);
    if (cell instanceof Bad) {
      const json = reader.json(rawValue);
      cell =
        json === 'null'
          ? null
          : new Unstorable(json.startsWith('"') ? (JSON.parse(json) as string) : json, json, cell.reason);
    }
    values[names[i] as string] = cell;
  }
  return values;
}

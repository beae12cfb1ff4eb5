import { type AsyncBuffer, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import type { BronzeType } from './config.ts';
import type { SourceRecord } from './records.ts';
import type { Column } from './schema.ts';

/** The bronze type a top-level Parquet column maps to: its declared type, not the values it happens to hold. */
export function bronzeTypeOf(element: {
  readonly type?: string;
  readonly converted_type?: string;
  readonly logical_type?: { readonly type: string };
  readonly num_children?: number;
}): BronzeType {
  // Groups (structs, lists, maps) are kept as their JSON, like a JSON object in a JSON file.
  if (element.num_children) return 'string';
  const logical = element.logical_type?.type;
  const converted = element.converted_type;
  switch (element.type) {
    case 'BOOLEAN':
      return 'boolean';
    case 'INT32':
    case 'INT64':
      // DECIMAL is read as a number; DATE, TIME and TIMESTAMP as instants, stored as ISO-8601 text.
      if (logical === 'DECIMAL' || converted === 'DECIMAL') return 'double';
      if (
        ['DATE', 'TIME', 'TIMESTAMP'].includes(logical ?? '') ||
        ['DATE', 'TIME_MILLIS', 'TIME_MICROS', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS'].includes(
          converted ?? '',
        )
      )
        return 'string';
      return 'long';
    case 'FLOAT':
    case 'DOUBLE':
      return 'double';
    default:
      // BYTE_ARRAY (read as UTF-8 text), FIXED_LEN_BYTE_ARRAY, INT96 timestamps.
      if (logical === 'DECIMAL' || converted === 'DECIMAL') return 'double';
      return 'string';
  }
}

/** hyparquet's values as the sink's columns take them: instants as ISO-8601 text, the rest as read. */
function normalize(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return value;
}

/**
 * The records of one Parquet landing file: first its columns with their declared types (so the schema comes
 * from the file's own schema, not from inference), then its rows, read one row group at a time over ranged
 * reads, so memory is bounded by a row group rather than the file. A file that is not Parquet, or a row
 * group that cannot be decoded, becomes one rescued record with the reason; nothing is dropped silently.
 */
export async function* parquetRecords(file: AsyncBuffer): AsyncGenerator<SourceRecord> {
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (error) {
    yield {
      kind: 'corrupt',
      raw: `<${file.byteLength} bytes>`,
      reason: `not a Parquet file: ${(error as Error).message}`,
    };
    return;
  }
  const columns: Column[] = parquetSchema(metadata).children.map((c) => ({
    name: c.element.name,
    type: bronzeTypeOf(c.element),
  }));
  yield { kind: 'columns', columns };
  let rowStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd });
    } catch (error) {
      yield {
        kind: 'corrupt',
        raw: `<row group ${index}: rows ${rowStart}-${rowEnd - 1}>`,
        reason: `unreadable Parquet row group: ${(error as Error).message}`,
      };
      rowStart = rowEnd;
      continue;
    }
    for (const row of rows) {
      const values: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(row)) values[name] = normalize(value);
      yield { kind: 'row', values };
    }
    rowStart = rowEnd;
  }
}

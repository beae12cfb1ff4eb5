import type { SchemaElement } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { type BronzeType, decimalOf } from './delta-types.ts';
import { FileStatsCollector } from './file-stats.ts';
import type { OutputRow } from './fit-record.ts';
import { allColumns, type Column, type TableSchema } from './schema.ts';

/** A finished data file, ready to upload. */
export interface DataFile {
  /** Relative to the table root, as the Delta `add` action names it. */
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly rows: number;
  readonly rescued: number;
  /** The `add` action's `stats` JSON (file-stats.ts). */
  readonly stats: string;
  /** The `add` action's `partitionValues` (partition-paths.ts); absent for an unpartitioned table. */
  readonly partitionValues?: Readonly<Record<string, string | null>>;
}

/**
 * Data file names carry the manifest version, the file's index in its commit and the attempt's unique id:
 * PROTOCOL.md "Data Files": uniquely named, never overwritten (the reference implementation puts a GUID in
 * the name). A replay, or a second sink racing on the same part, writes other names: at worst orphans that
 * no commit names, never a committed file rewritten under its `add.size`.
 */
export function dataFilePath(manifestVersion: number, index: number, attempt: string): string {
  return `part-${String(manifestVersion).padStart(20, '0')}-${String(index).padStart(5, '0')}-${attempt}.snappy.parquet`;
}

type Repetition = 'REQUIRED' | 'OPTIONAL' | 'REPEATED';

/** Bytes of the smallest FIXED_LEN_BYTE_ARRAY holding every unscaled value of `precision` digits (Spark's
 * `Decimal.minBytesForPrecision`). */
export function decimalBytes(precision: number): number {
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) < 10n ** BigInt(precision)) bytes += 1;
  return bytes;
}

/** The outer group of a LIST or MAP, annotated both ways (converted and logical), as Spark writes it. */
const wrapper = (name: string, repetition: Repetition, kind: 'LIST' | 'MAP'): SchemaElement => ({
  name,
  repetition_type: repetition,
  num_children: 1,
  converted_type: kind,
  logical_type: { type: kind },
});

/**
 * The Parquet schema elements (depth first) of a column of `type`, the way Delta readers expect them
 * (PROTOCOL.md "Delta Data Type to Parquet Type Mappings") and Spark writes them: `byte`/`short` INT32 with
 * INT(8)/INT(16); `integer` INT32; `long` INT64; `date` INT32 DATE; `timestamp` INT64 TIMESTAMP(MICROS,
 * isAdjustedToUTC=true), `timestamp_ntz` the same with isAdjustedToUTC=false (and no converted type, which
 * would say UTC); `decimal(p,s)` INT32 up to 9 digits, INT64 up to 18, else FIXED_LEN_BYTE_ARRAY; `binary`
 * plain BYTE_ARRAY; `string` BYTE_ARRAY UTF8; arrays the three-level LIST, maps the MAP `key_value` group.
 */
export function parquetElements(name: string, type: BronzeType, repetition: Repetition): SchemaElement[] {
  const leaf = (element: Omit<SchemaElement, 'name' | 'repetition_type'>): SchemaElement[] => [
    { name, repetition_type: repetition, ...element },
  ];
  if (typeof type !== 'string') {
    switch (type.type) {
      case 'struct':
        return [
          { name, repetition_type: repetition, num_children: type.fields.length },
          ...type.fields.flatMap((f) => parquetElements(f.name, f.type, 'OPTIONAL')),
        ];
      case 'array':
        return [
          wrapper(name, repetition, 'LIST'),
          { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
          ...parquetElements('element', type.elementType, 'OPTIONAL'),
        ];
      case 'map':
        return [
          wrapper(name, repetition, 'MAP'),
          { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
          ...parquetElements('key', type.keyType, 'REQUIRED'),
          ...parquetElements('value', type.valueType, 'OPTIONAL'),
        ];
    }
  }
  switch (type) {
    case 'string':
      return leaf({ type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } });
    case 'binary':
      return leaf({ type: 'BYTE_ARRAY' });
    case 'boolean':
      return leaf({ type: 'BOOLEAN' });
    case 'long':
      return leaf({ type: 'INT64' });
    case 'integer':
      return leaf({ type: 'INT32' });
    // The converted type alone: readers take INT_8/INT_16 as INT(8)/INT(16) (LogicalTypes.md, backward
    // compatibility), and hyparquet-writer 0.17 encodes IntType.bitWidth as an i32 where thrift wants an i8,
    // which pyarrow rejects as invalid thrift.
    case 'short':
      return leaf({ type: 'INT32', converted_type: 'INT_16' });
    case 'byte':
      return leaf({ type: 'INT32', converted_type: 'INT_8' });
    case 'float':
      return leaf({ type: 'FLOAT' });
    case 'double':
      return leaf({ type: 'DOUBLE' });
    case 'date':
      return leaf({ type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } });
    case 'timestamp':
      return leaf({
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      });
    case 'timestamp_ntz':
      return leaf({
        type: 'INT64',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' },
      });
  }
  const decimal = decimalOf(type);
  if (!decimal) throw new Error(`no Parquet type for ${type}`);
  const { precision, scale } = decimal;
  const annotation = {
    converted_type: 'DECIMAL' as const,
    precision,
    scale,
    logical_type: { type: 'DECIMAL' as const, precision, scale },
  };
  if (precision <= 9) return leaf({ type: 'INT32', ...annotation });
  if (precision <= 18) return leaf({ type: 'INT64', ...annotation });
  return leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: decimalBytes(precision), ...annotation });
}

function parquetSchema(columns: readonly Column[]): SchemaElement[] {
  return [
    { name: 'root', num_children: columns.length },
    ...columns.flatMap((c) => parquetElements(c.name, c.type, 'OPTIONAL')),
  ];
}

export interface ParquetSplitterOptions {
  readonly schema: TableSchema;
  readonly manifestVersion: number;
  /** Unique per attempt (a UUID): part of every data file's name. */
  readonly attempt: string;
  /** Close a file once it is at least this big (checked after each row group). */
  readonly maxFileBytes: number;
  /** Rows buffered before they are encoded as one row group. */
  readonly rowGroupRows?: number;
  /** The file's columns: every column of the table but its partition columns. @default allColumns(schema) */
  readonly columns?: readonly Column[];
  /** `col=value/` directories the files go under (partition-paths.ts), and their partition values. */
  readonly partition?: {
    readonly directory: string;
    readonly values: Readonly<Record<string, string | null>>;
  };
  /** The next file's index in the commit, when several splitters write one commit. @default its own count */
  readonly nextIndex?: () => number;
  /** Each file's path, by its index in this splitter; default `dataFilePath(manifestVersion, index, attempt)`. */
  readonly pathOf?: (index: number) => string;
  /** Called with each finished file, in order; awaited, so at most one file is held at a time. */
  readonly onFile: (file: DataFile) => Promise<void>;
}

/**
 * Rows in, Parquet files of about `maxFileBytes` out. Memory: one row group of rows plus one file being
 * built (hyparquet-writer keeps it in a growing buffer until `finish`).
 */
export class ParquetSplitter {
  private readonly columns;
  private readonly rowGroupRows: number;
  private buffer: OutputRow[] = [];
  private writer:
    | { bytes: ByteWriter; parquet: ParquetWriter; rows: number; rescued: number; stats: FileStatsCollector }
    | undefined;
  private index = 0;

  constructor(private readonly options: ParquetSplitterOptions) {
    this.columns = options.columns ?? allColumns(options.schema);
    this.rowGroupRows = options.rowGroupRows ?? 10_000;
  }

  async add(row: OutputRow): Promise<void> {
    this.buffer.push(row);
    if (this.buffer.length >= this.rowGroupRows) await this.flushRowGroup();
  }

  /** Writes what is buffered and closes the last file; returns how many files were written. */
  async close(): Promise<number> {
    await this.flushRowGroup();
    await this.finishFile();
    return this.index;
  }

  /** Rows added and not yet encoded. */
  get bufferedRows(): number {
    return this.buffer.length;
  }

  /** Bytes of the file being built (0 when none is open). */
  get openBytes(): number {
    return this.writer?.bytes.offset ?? 0;
  }

  /** Encodes the buffered rows as a row group of the open file (closing it if it reached maxFileBytes). */
  async flushRowGroup(): Promise<void> {
    if (this.buffer.length === 0) return;
    const rows = this.buffer;
    this.buffer = [];
    if (!this.writer) {
      const bytes = new ByteWriter(1024 * 1024);
      this.writer = {
        bytes,
        parquet: new ParquetWriter({
          writer: bytes,
          schema: parquetSchema(this.columns),
          // A fixed creator keeps a replay's file byte-identical to the first attempt's.
          createdBy: 'inlet bronze sink (hyparquet-writer)',
        }),
        rows: 0,
        rescued: 0,
        stats: new FileStatsCollector(this.columns),
      };
    }
    const w = this.writer;
    w.parquet.write({
      columnData: this.columns.map((c) => ({ name: c.name, data: rows.map((r) => r[c.name] ?? null) })),
      rowGroupSize: rows.length,
    });
    w.rows += rows.length;
    w.rescued += rows.filter((r) => r._rescued_data !== null).length;
    for (const row of rows) w.stats.add(row);
    if (w.bytes.offset >= this.options.maxFileBytes) await this.finishFile();
  }

  /** Closes the open file, if any, and hands it to `onFile`. */
  async finishFile(): Promise<void> {
    const w = this.writer;
    if (!w) return;
    this.writer = undefined;
    w.parquet.finish();
    const index = this.options.nextIndex?.() ?? this.index;
    const { partition } = this.options;
    const path =
      this.options.pathOf?.(index) ??
      `${partition?.directory ?? ''}${dataFilePath(this.options.manifestVersion, index, this.options.attempt)}`;
    this.index += 1;
    await this.options.onFile({
      path,
      bytes: w.bytes.getBytes(),
      rows: w.rows,
      rescued: w.rescued,
      stats: w.stats.json(),
      ...(partition ? { partitionValues: partition.values } : {}),
    });
  }
}

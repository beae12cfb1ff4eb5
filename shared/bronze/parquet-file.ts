import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { BronzeType } from './config.ts';
import { allColumns, type OutputRow, type TableSchema } from './schema.ts';

/** A finished data file, ready to upload. */
export interface DataFile {
  /** Relative to the table root, as the Delta `add` action names it. */
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly rows: number;
  readonly rescued: number;
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

const PARQUET_TYPE: Record<BronzeType, { type: 'BYTE_ARRAY' | 'INT64' | 'DOUBLE' | 'BOOLEAN'; utf8?: true }> =
  {
    string: { type: 'BYTE_ARRAY', utf8: true },
    long: { type: 'INT64' },
    double: { type: 'DOUBLE' },
    boolean: { type: 'BOOLEAN' },
  };

function parquetSchema(schema: TableSchema) {
  const columns = allColumns(schema);
  return [
    { name: 'root', num_children: columns.length },
    ...columns.map((c) => {
      const t = PARQUET_TYPE[c.type];
      return {
        name: c.name,
        type: t.type,
        repetition_type: 'OPTIONAL' as const,
        ...(t.utf8 ? { converted_type: 'UTF8' as const, logical_type: { type: 'STRING' as const } } : {}),
      };
    }),
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
  private writer: { bytes: ByteWriter; parquet: ParquetWriter; rows: number; rescued: number } | undefined;
  private index = 0;

  constructor(private readonly options: ParquetSplitterOptions) {
    this.columns = allColumns(options.schema);
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

  private async flushRowGroup(): Promise<void> {
    if (this.buffer.length === 0) return;
    const rows = this.buffer;
    this.buffer = [];
    if (!this.writer) {
      const bytes = new ByteWriter(1024 * 1024);
      this.writer = {
        bytes,
        parquet: new ParquetWriter({
          writer: bytes,
          schema: parquetSchema(this.options.schema),
          // A fixed creator keeps a replay's file byte-identical to the first attempt's.
          createdBy: 'inlet bronze sink (hyparquet-writer)',
        }),
        rows: 0,
        rescued: 0,
      };
    }
    const w = this.writer;
    w.parquet.write({
      columnData: this.columns.map((c) => ({ name: c.name, data: rows.map((r) => r[c.name] ?? null) })),
      rowGroupSize: rows.length,
    });
    w.rows += rows.length;
    w.rescued += rows.filter((r) => r._rescued_data !== null).length;
    if (w.bytes.offset >= this.options.maxFileBytes) await this.finishFile();
  }

  private async finishFile(): Promise<void> {
    const w = this.writer;
    if (!w) return;
    this.writer = undefined;
    w.parquet.finish();
    const path = dataFilePath(this.options.manifestVersion, this.index, this.options.attempt);
    this.index += 1;
    await this.options.onFile({ path, bytes: w.bytes.getBytes(), rows: w.rows, rescued: w.rescued });
  }
}

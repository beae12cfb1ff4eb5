import { INGEST_DATE_COLUMN } from './config.ts';
import type { BronzeType } from './delta-types.ts';
import type { OutputRow } from './fit-record.ts';
import { type DataFile, ParquetSplitter } from './parquet-file.ts';
import { ingestDate, partitionDirectory, partitionValueText } from './partition-paths.ts';
import { fileColumns, type TableSchema } from './schema.ts';
import { dateText } from './values.ts';

/**
 * Partitions with a file open at once. Each open file costs its writer's 1 MiB starting buffer and a row
 * group's worth of rows; past this, the partition written to least recently has its file closed (uploaded
 * as it is) and a later row of it starts a new file in the same commit. So a version of many distinct
 * values costs more, smaller files, never unbounded memory (docs/bronze.md, "Partitions").
 */
export const MAX_OPEN_PARTITIONS = 16;

export interface PartitionedWriterOptions {
  readonly schema: TableSchema;
  /** The table's partition columns (its metaData's `partitionColumns`); empty: one stream of files. */
  readonly partitionBy: readonly string[];
  /** The manifest version's commit time: the ingestion date's value. */
  readonly committedAt: string;
  readonly manifestVersion: number;
  readonly attempt: string;
  /**
   * Bytes of all open files together: past it the biggest is closed. One partition closes its file at this
   * size, as an unpartitioned table does.
   */
  readonly maxFileBytes: number;
  /** Rows buffered across all partitions before the biggest buffer is encoded as a row group. */
  readonly rowGroupRows?: number;
  readonly onFile: (file: DataFile) => Promise<void>;
}

/**
 * Rows in, Parquet data files out, one stream of files per distinct partition value (docs/bronze.md,
 * "Partitions"). Memory is bounded as for one stream: at most `rowGroupRows` rows buffered in all, about
 * `maxFileBytes` of open files in all, and at most MAX_OPEN_PARTITIONS files open.
 */
export class PartitionedWriter {
  /** Open partitions by their values' key, least recently written first (a Map keeps insertion order). */
  private readonly open = new Map<string, ParquetSplitter>();
  private readonly rowGroupRows: number;
  private readonly types: ReadonlyMap<string, BronzeType>;
  private readonly ingestDate: string;
  private buffered = 0;
  private files = 0;

  constructor(private readonly options: PartitionedWriterOptions) {
    this.rowGroupRows = options.rowGroupRows ?? 10_000;
    this.types = new Map(options.schema.map((c) => [c.name, c.type]));
    this.ingestDate = dateText(ingestDate(options.committedAt));
  }

  async add(row: OutputRow): Promise<void> {
    const values = this.options.partitionBy.map(
      (column) =>
        [
          column,
          column === INGEST_DATE_COLUMN
            ? this.ingestDate
            : partitionValueText(row[column], this.types.get(column) ?? 'string'),
        ] as const,
    );
    const key = JSON.stringify(values.map(([, value]) => value));
    let splitter = this.open.get(key);
    if (splitter) this.open.delete(key);
    else {
      if (this.open.size >= MAX_OPEN_PARTITIONS) await this.closeLeastRecent();
      splitter = this.splitter(values);
    }
    this.open.set(key, splitter);
    await splitter.add(row);
    this.buffered += 1;
    if (this.buffered >= this.rowGroupRows) await this.flushBiggest();
  }

  /** Writes everything buffered and closes every file. */
  async close(): Promise<void> {
    for (const splitter of this.open.values()) await splitter.close();
    this.open.clear();
    this.buffered = 0;
  }

  private splitter(values: ReadonlyArray<readonly [string, string | null]>): ParquetSplitter {
    const { options } = this;
    return new ParquetSplitter({
      schema: options.schema,
      columns: fileColumns(options.schema, options.partitionBy),
      manifestVersion: options.manifestVersion,
      attempt: options.attempt,
      maxFileBytes: options.maxFileBytes,
      // Row groups are this writer's call, across partitions.
      rowGroupRows: Number.POSITIVE_INFINITY,
      ...(values.length > 0
        ? { partition: { directory: partitionDirectory(values), values: Object.fromEntries(values) } }
        : {}),
      nextIndex: () => this.files++,
      onFile: options.onFile,
    });
  }

  private async closeLeastRecent(): Promise<void> {
    const [key, splitter] = this.open.entries().next().value as [string, ParquetSplitter];
    this.buffered -= splitter.bufferedRows;
    await splitter.close();
    this.open.delete(key);
  }

  /** Encodes the biggest buffer, then closes the biggest files while the open ones pass `maxFileBytes`. */
  private async flushBiggest(): Promise<void> {
    const splitters = [...this.open.values()];
    const biggest = (measure: (s: ParquetSplitter) => number) =>
      splitters.reduce((a, b) => (measure(b) > measure(a) ? b : a));
    const fullest = biggest((s) => s.bufferedRows);
    this.buffered -= fullest.bufferedRows;
    await fullest.flushRowGroup();
    let bytes = splitters.reduce((sum, s) => sum + s.openBytes, 0);
    while (bytes >= this.options.maxFileBytes) {
      const largest = biggest((s) => s.openBytes);
      bytes -= largest.openBytes;
      await largest.finishFile();
    }
  }
}

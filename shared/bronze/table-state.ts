import { positionOf } from './delta-log.ts';
import { UnreadableTableError } from './errors.ts';
import { rescuedOf, rowsOf } from './log-state.ts';
import type { DeltaStore, SinkPosition } from './ports.ts';
import { type Column, fromDeltaSchemaString, type TableSchema, tableColumns } from './schema.ts';
import { replayFiles, replayLog } from './snapshot.ts';
import { readerProblems } from './table-features.ts';

/** What a bronze Delta table holds at its latest version, replayed from its log. */
export interface BronzeTableState {
  /** -1 when nothing is committed yet. */
  readonly version: number;
  /**
   * Where the sink's `txn`s say the table stands: the last manifest version wholly in it, and the files of
   * the next one already in when that one is being written in parts. Not `version + 1`: a version written in
   * parts is several Delta versions, and other writers' commits take versions too.
   */
  readonly position: SinkPosition;
  readonly schema: TableSchema;
  /** Every column a reader sees, in the log's order: data, system, then the ingestion date when partitioned by it. */
  readonly columns: readonly Column[];
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
  /** Bytes of the live data files (each `add`'s `size`). */
  readonly bytes: number;
  /** The checkpoint the replay started from, if any, and how many JSON commits it read after it. */
  readonly checkpointVersion?: number;
  readonly commitsRead: number;
}

/**
 * The table's state for `inlet table`, read like any Delta reader would: from the latest checkpoint, then
 * the commits after it (refused when its protocol needs a reader feature this code lacks). Row counts are each live file's `numRecords`, rescued counts its `inlet.rescuedRows`
 * tag; the files are streamed, a checkpoint row group at a time, so a table of any size is counted.
 */
export async function readBronzeTable(table: string, delta: DeltaStore): Promise<BronzeTableState> {
  const replay = await replayLog(delta, { table });
  const problems = replay.protocol ? readerProblems(replay.protocol) : [];
  if (problems.length > 0) throw new UnreadableTableError(table, problems);
  let rows = 0;
  let rescued = 0;
  let files = 0;
  let bytes = 0;
  for await (const action of replayFiles(delta, replay)) {
    if (!('add' in action)) continue;
    files += 1;
    bytes += action.add.size;
    rows += rowsOf(action.add);
    rescued += rescuedOf(action.add);
  }
  const partitionBy = replay.metaData?.partitionColumns ?? [];
  const schema = replay.metaData ? fromDeltaSchemaString(replay.metaData.schemaString, partitionBy) : [];
  return {
    version: replay.version,
    position: positionOf(table, replay.txns),
    schema,
    columns: tableColumns(schema, partitionBy),
    rows,
    rescued,
    files,
    bytes,
    checkpointVersion: replay.checkpoint?.version,
    commitsRead: replay.commitsRead,
  };
}

import { positionOf } from './delta-log.ts';
import { UnreadableTableError } from './errors.ts';
import { rescuedOf, rowsOf } from './log-state.ts';
import type { DeltaStore, SinkPosition } from './ports.ts';
import { fromDeltaSchemaString, type TableSchema } from './schema.ts';
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
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
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
  for await (const action of replayFiles(delta, replay)) {
    if (!('add' in action)) continue;
    files += 1;
    rows += rowsOf(action.add);
    rescued += rescuedOf(action.add);
  }
  return {
    version: replay.version,
    position: positionOf(table, replay.txns),
    schema: replay.metaData
      ? fromDeltaSchemaString(replay.metaData.schemaString, replay.metaData.partitionColumns)
      : [],
    rows,
    rescued,
    files,
    checkpointVersion: replay.checkpoint?.version,
    commitsRead: replay.commitsRead,
  };
}

import { rescuedOf, rowsOf } from './log-state.ts';
import type { DeltaStore } from './ports.ts';
import { fromDeltaSchemaString, type TableSchema } from './schema.ts';
import { replayFiles, replayLog } from './snapshot.ts';

/** What a bronze Delta table holds at its latest version, replayed from its log. */
export interface BronzeTableState {
  /** -1 when nothing is committed yet. */
  readonly version: number;
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
 * the commits after it. Row counts are each live file's `numRecords`, rescued counts its `inlet.rescuedRows`
 * tag; the files are streamed, a checkpoint row group at a time, so a table of any size is counted.
 */
export async function readBronzeTable(_table: string, delta: DeltaStore): Promise<BronzeTableState> {
  const replay = await replayLog(delta);
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
    schema: replay.metaData ? fromDeltaSchemaString(replay.metaData.schemaString) : [],
    rows,
    rescued,
    files,
    checkpointVersion: replay.checkpoint?.version,
    commitsRead: replay.commitsRead,
  };
}

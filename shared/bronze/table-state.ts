import { rescuedOf, rowsOf } from './log-state.ts';
import type { DeltaStore } from './ports.ts';
import { fromDeltaSchemaString, type TableSchema } from './schema.ts';
import { loadSnapshot } from './snapshot.ts';

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
 * tag.
 */
export async function readBronzeTable(_table: string, delta: DeltaStore): Promise<BronzeTableState> {
  const { state, checkpointVersion, commitsRead } = await loadSnapshot(delta);
  const files = [...state.adds.values()];
  return {
    version: state.version,
    schema: state.metaData ? fromDeltaSchemaString(state.metaData.schemaString) : [],
    rows: files.reduce((sum, f) => sum + rowsOf(f), 0),
    rescued: files.reduce((sum, f) => sum + rescuedOf(f), 0),
    files: files.length,
    checkpointVersion,
    commitsRead,
  };
}

import { parseCommit } from './delta-log.ts';
import type { DeltaStore } from './ports.ts';
import type { TableSchema } from './schema.ts';

/** What a bronze Delta table holds at its latest version, replayed from its log. */
export interface BronzeTableState {
  /** -1 when nothing is committed yet. */
  readonly version: number;
  readonly schema: TableSchema;
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
}

/**
 * Replays `_delta_log/` (every commit: this sink writes no checkpoints yet) for `inlet table`. Row counts
 * come from each `add`'s `numRecords`, rescued counts from our commitInfo.
 */
export async function readBronzeTable(table: string, delta: DeltaStore): Promise<BronzeTableState> {
  let state: BronzeTableState = { version: -1, schema: [], rows: 0, rescued: 0, files: 0 };
  for (const version of await delta.listCommits()) {
    const summary = parseCommit(table, (await delta.getCommit(version)) ?? '');
    state = {
      version,
      schema: summary.schema ?? state.schema,
      rows: state.rows + summary.rows,
      rescued: state.rescued + summary.rescued,
      files: state.files + summary.files,
    };
  }
  return state;
}

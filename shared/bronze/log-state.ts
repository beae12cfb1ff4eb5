import {
  type AddAction,
  type MetaDataAction,
  type ProtocolAction,
  parseActions,
  type RemoveAction,
  type StateAction,
  type TxnAction,
} from './delta-actions.ts';
import type { LogPlace } from './errors.ts';

/** Per-file count of rows with `_rescued_data`, in the `add` action's `tags` so checkpoints keep it. */
export const RESCUED_ROWS_TAG = 'inlet.rescuedRows';

/**
 * A Delta table's state at one version: the reconciled actions (PROTOCOL.md "Action Reconciliation"), which
 * is exactly what a checkpoint stores. Built by replaying JSON commits onto an empty state or onto the state
 * read from a checkpoint.
 */
export interface LogState {
  /** -1 before version 0. */
  version: number;
  protocol?: ProtocolAction;
  metaData?: MetaDataAction;
  /** Latest per appId. */
  readonly txns: Map<string, TxnAction>;
  /** Live files by path. */
  readonly adds: Map<string, AddAction>;
  /** Tombstones by path (this sink writes none; kept so a checkpoint of any table is complete). */
  readonly removes: Map<string, RemoveAction>;
}

export const emptyLogState = (): LogState => ({
  version: -1,
  txns: new Map(),
  adds: new Map(),
  removes: new Map(),
});

/**
 * Applies one JSON commit as version `version` (its actions decoded by their schemas, delta-actions.ts;
 * `place` names the table in an error).
 */
export function applyCommit(
  state: LogState,
  version: number,
  text: string,
  place: Omit<LogPlace, 'version'> = {},
): void {
  let commitRescued = 0;
  const added: string[] = [];
  for (const action of parseActions({ ...place, version }, text)) {
    if ('commitInfo' in action) {
      commitRescued += action.commitInfo.inlet?.rescuedRows ?? 0;
      continue;
    }
    applyAction(state, action);
    if ('add' in action) added.push(action.add.path);
  }
  // Commits written before the per-file tag carried the count only in commitInfo, which a checkpoint drops:
  // pin it on the commit's first file so the total survives.
  const first = added[0];
  const firstAdd = first === undefined ? undefined : state.adds.get(first);
  if (
    firstAdd &&
    commitRescued > 0 &&
    added.every((p) => state.adds.get(p)?.tags?.[RESCUED_ROWS_TAG] === undefined)
  )
    state.adds.set(firstAdd.path, {
      ...firstAdd,
      tags: { ...firstAdd.tags, [RESCUED_ROWS_TAG]: String(commitRescued) },
    });
  state.version = version;
}

/** One reconciled action onto a state (PROTOCOL.md "Action Reconciliation"). */
export function applyAction(state: LogState, action: StateAction): void {
  if ('protocol' in action) state.protocol = action.protocol;
  else if ('metaData' in action) state.metaData = action.metaData;
  else if ('txn' in action) state.txns.set(action.txn.appId, action.txn);
  else if ('add' in action) {
    state.adds.set(action.add.path, action.add);
    state.removes.delete(action.add.path);
  } else {
    state.adds.delete(action.remove.path);
    state.removes.set(action.remove.path, action.remove);
  }
}

/** Rows of a live file, from its `stats.numRecords` (0 when a writer left stats out). */
export function rowsOf(add: Pick<AddAction, 'stats'>): number {
  if (!add.stats) return 0;
  return (JSON.parse(add.stats) as { numRecords?: number }).numRecords ?? 0;
}

export function rescuedOf(add: AddAction): number {
  return Number(add.tags?.[RESCUED_ROWS_TAG] ?? 0);
}

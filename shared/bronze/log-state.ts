/**
 * A Delta table's state at one version: the reconciled actions (PROTOCOL.md "Action Reconciliation"), which
 * is exactly what a checkpoint stores. Built by replaying JSON commits onto an empty state or onto the state
 * read from a checkpoint.
 */

export interface ProtocolAction {
  readonly minReaderVersion: number;
  readonly minWriterVersion: number;
  /** Only with reader version 3 / writer version 7 (PROTOCOL.md "Table Features"). */
  readonly readerFeatures?: readonly string[];
  readonly writerFeatures?: readonly string[];
}

export interface MetaDataAction {
  readonly id: string;
  readonly name?: string | null;
  readonly description?: string | null;
  readonly format: { readonly provider: string; readonly options?: Readonly<Record<string, string>> | null };
  readonly schemaString: string;
  readonly partitionColumns: readonly string[];
  readonly configuration?: Readonly<Record<string, string>> | null;
  readonly createdTime?: number | null;
}

export interface TxnAction {
  readonly appId: string;
  readonly version: number;
  readonly lastUpdated?: number | null;
}

export interface AddAction {
  readonly path: string;
  readonly partitionValues: Readonly<Record<string, string | null>>;
  readonly size: number;
  readonly modificationTime: number;
  readonly dataChange: boolean;
  readonly stats?: string | null;
  readonly tags?: Readonly<Record<string, string>> | null;
}

export interface RemoveAction {
  readonly path: string;
  readonly deletionTimestamp?: number | null;
  readonly dataChange: boolean;
}

/** Per-file count of rows with `_rescued_data`, in the `add` action's `tags` so checkpoints keep it. */
export const RESCUED_ROWS_TAG = 'inlet.rescuedRows';

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

/** Applies one JSON commit (newline-delimited actions) as version `version`. */
export function applyCommit(state: LogState, version: number, text: string): void {
  let commitRescued = 0;
  const added: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const action = JSON.parse(line) as {
      protocol?: ProtocolAction;
      metaData?: MetaDataAction;
      txn?: TxnAction;
      add?: AddAction;
      remove?: RemoveAction;
      commitInfo?: { inlet?: { rescuedRows?: number } };
    };
    if (action.protocol) state.protocol = action.protocol;
    if (action.metaData) state.metaData = action.metaData;
    if (action.txn) state.txns.set(action.txn.appId, action.txn);
    if (action.add) {
      state.adds.set(action.add.path, action.add);
      state.removes.delete(action.add.path);
      added.push(action.add.path);
    }
    if (action.remove) {
      state.adds.delete(action.remove.path);
      state.removes.set(action.remove.path, action.remove);
    }
    commitRescued += action.commitInfo?.inlet?.rescuedRows ?? 0;
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

/** Rows of a live file, from its `stats.numRecords` (0 when a writer left stats out). */
export function rowsOf(add: Pick<AddAction, 'stats'>): number {
  if (!add.stats) return 0;
  return (JSON.parse(add.stats) as { numRecords?: number }).numRecords ?? 0;
}

export function rescuedOf(add: AddAction): number {
  return Number(add.tags?.[RESCUED_ROWS_TAG] ?? 0);
}

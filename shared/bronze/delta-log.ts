import { createHash } from 'node:crypto';
import { InletError } from '../kernel/errors.ts';
import {
  type DeltaAction,
  type MetaDataAction,
  type ProtocolAction,
  parseActions,
  serializeActions,
  type TxnAction,
} from './delta-actions.ts';
import { RESCUED_ROWS_TAG, rowsOf } from './log-state.ts';
import type { DataFile } from './parquet-file.ts';
import { addPathOf } from './partition-paths.ts';
import type { SinkPosition } from './ports.ts';
import { fromDeltaSchemaString, type TableSchema, toDeltaSchemaString } from './schema.ts';
import { LEGACY_PROTOCOL } from './table-features.ts';

/**
 * The Delta transaction log as this sink writes it (delta-io/delta PROTOCOL.md; sections cited in
 * docs/bronze.md): one newline-delimited JSON file per version, `_delta_log/<version, 20 digits>.json`.
 */
export function logKey(deltaVersion: number): string {
  return `_delta_log/${String(deltaVersion).padStart(20, '0')}.json`;
}

/**
 * The `txn` appId whose version is the last manifest version wholly in the table (PROTOCOL.md "Transaction
 * Identifiers": the streaming writer's idempotency). Every sink since the first writes it so: a table
 * written one commit per version continues as it is.
 */
export const sinkAppId = (table: string) => `inlet-bronze-${table}`;
/** The `txn` appId of a version written in parts: its version is `partTxnVersion(v, files done)`. */
export const sinkPartAppId = (table: string) => `inlet-bronze-${table}.part`;

/**
 * A `txn` version is one long: manifest version x 10^7 + files of it done. A manifest cannot hold 10^7
 * files (a manifest that big could not even be parsed into one string), and manifest versions stay far
 * below 9 x 10^8 (28 years at one version a second), so the long stays exact in a double.
 */
const PART_SCALE = 10_000_000;
export const partTxnVersion = (manifestVersion: number, filesDone: number) =>
  manifestVersion * PART_SCALE + filesDone;

/** The position a part's `txn` version says: files done of the manifest version after the last complete one. */
export function partPosition(txnVersion: number): SinkPosition {
  return { manifestVersion: Math.floor(txnVersion / PART_SCALE) - 1, filesDone: txnVersion % PART_SCALE };
}

/** Where the sink's `txn`s say the table stands (the latest `txn` per appId, PROTOCOL.md "Action Reconciliation"). */
export function positionOf(table: string, txns: ReadonlyMap<string, TxnAction>): SinkPosition {
  const manifestVersion = txns.get(sinkAppId(table))?.version ?? 0;
  const part = txns.get(sinkPartAppId(table))?.version;
  if (part === undefined) return { manifestVersion, filesDone: 0 };
  const inPart = partPosition(part);
  if (inPart.manifestVersion < manifestVersion) return { manifestVersion, filesDone: 0 };
  if (inPart.manifestVersion > manifestVersion)
    throw new InletError(
      `bronze table ${table}: the log has a part of manifest version ${inPart.manifestVersion + 1} but only versions up to ${manifestVersion} complete`,
      { retryable: false },
    );
  return inPart;
}

/** -1, 0, 1 as `a` is before, at, after `b`. */
export function comparePositions(a: SinkPosition, b: SinkPosition): number {
  if (a.manifestVersion !== b.manifestVersion) return a.manifestVersion < b.manifestVersion ? -1 : 1;
  if (a.filesDone !== b.filesDone) return a.filesDone < b.filesDone ? -1 : 1;
  return 0;
}

/** A stable UUID for a new table's metaData.id: the same on every attempt at its first commit. */
function tableId(table: string, location: string): string {
  const h = createHash('sha256').update(`${table}\n${location}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface CommitInput {
  readonly table: string;
  readonly location: string;
  readonly manifestVersion: number;
  readonly batchIds: readonly string[];
  /** The manifest's files this commit covers, `[from, to)` of `of`: the whole version, or one part of it. */
  readonly sourceFiles: { readonly from: number; readonly to: number; readonly of: number };
  /** The table's metaData before this commit; undefined for a new table (this commit creates it). */
  readonly previous: MetaDataAction | undefined;
  /** The schema after this commit, and whether it differs from the previous one. */
  readonly schema: TableSchema;
  readonly schemaChanged: boolean;
  readonly files: ReadonlyArray<Omit<DataFile, 'bytes'> & { readonly size: number }>;
  /** Landing files of the version that could not be read (nothing to give), for the record. */
  readonly missingSources: readonly string[];
  /**
   * Landing files read at another write than the manifest names (path identity, rewritten since the
   * event): cleanSource leaves them (shared/bronze/version-reads.ts). Written only when there are some.
   */
  readonly rewrittenSources?: readonly string[];
  /** epoch ms; the manifest's commit time. */
  readonly timestamp: number;
  /** The protocol this commit sets (table-features.ts); version 0 without one gets reader 1 / writer 2. */
  readonly protocol?: ProtocolAction;
  /** A new table's partition columns (config `partitionBy`); an existing table keeps its own. */
  readonly partitionBy?: readonly string[];
  /** Table properties this commit sets beside the ones the table has (`delta.enableTypeWidening`). */
  readonly configuration?: Readonly<Record<string, string>>;
}

/** The actions of one commit, in the order PROTOCOL.md's examples use. */
export function buildCommit(input: CommitInput): string {
  const rows = input.files.reduce((sum, f) => sum + f.rows, 0);
  const rescued = input.files.reduce((sum, f) => sum + f.rescued, 0);
  const { from, to, of } = input.sourceFiles;
  const whole = from === 0 && to === of;
  const actions: DeltaAction[] = [
    {
      commitInfo: {
        timestamp: input.timestamp,
        operation: 'WRITE',
        operationParameters: { mode: 'Append' },
        isBlindAppend: true,
        engineInfo: 'inlet-bronze-sink',
        operationMetrics: {
          numFiles: String(input.files.length),
          numOutputRows: String(rows),
          numOutputBytes: String(input.files.reduce((sum, f) => sum + f.size, 0)),
        },
        inlet: {
          manifestVersion: input.manifestVersion,
          batchIds: input.batchIds,
          ...(whole ? {} : { sourceFiles: input.sourceFiles }),
          rescuedRows: rescued,
          missingSources: input.missingSources,
          ...(input.rewrittenSources?.length ? { rewrittenSources: input.rewrittenSources } : {}),
        },
      },
    },
  ];
  const protocol = input.protocol ?? (input.previous ? undefined : LEGACY_PROTOCOL);
  if (protocol) actions.push({ protocol });
  if (!input.previous || input.schemaChanged) {
    // Everything else another writer set (table properties, its id) is kept: only the schema changes, and
    // the properties this commit sets.
    const base: MetaDataAction = input.previous ?? {
      id: tableId(input.table, input.location),
      name: input.table,
      format: { provider: 'parquet', options: {} },
      schemaString: '',
      partitionColumns: [...(input.partitionBy ?? [])],
      configuration: {},
      createdTime: input.timestamp,
    };
    const schemaString = toDeltaSchemaString(input.schema, base.partitionColumns);
    const configuration = input.configuration
      ? { ...(base.configuration ?? {}), ...input.configuration }
      : base.configuration;
    actions.push({ metaData: { ...base, schemaString, configuration } });
  }
  // The version that completes a manifest version says so on the main appId; a part before it on its own.
  actions.push({
    txn:
      to === of
        ? { appId: sinkAppId(input.table), version: input.manifestVersion, lastUpdated: input.timestamp }
        : {
            appId: sinkPartAppId(input.table),
            version: partTxnVersion(input.manifestVersion, to),
            lastUpdated: input.timestamp,
          },
  });
  for (const file of input.files) {
    actions.push({
      add: {
        // A URI (PROTOCOL.md "Add File"): a partition directory's escapes are themselves escaped.
        path: addPathOf(file.path),
        partitionValues: file.partitionValues ?? {},
        size: file.size,
        modificationTime: input.timestamp,
        dataChange: true,
        // PROTOCOL.md "Per-file Statistics", so readers skip files (file-stats.ts).
        stats: file.stats,
        // In the file's own action (not only commitInfo) so a checkpoint, which drops commitInfo, keeps it.
        tags: { [RESCUED_ROWS_TAG]: String(file.rescued) },
      },
    });
  }
  return serializeActions(actions);
}

/** What a committed log entry says, as far as the sink and `inlet table` need it. */
export interface CommitSummary {
  /** Carries one of our `txn`s: written by this sink (an earlier attempt, or another run of it). */
  readonly ours: boolean;
  /** The manifest version from our main `txn`, undefined for a part or a commit some other writer made. */
  readonly manifestVersion?: number;
  readonly txns: readonly TxnAction[];
  readonly metaData?: MetaDataAction;
  readonly protocol?: ProtocolAction;
  /** The schema set by this commit's metaData, if it has one. */
  readonly schema?: TableSchema;
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
  /** Bytes of the data files it adds. */
  readonly bytes: number;
}

/** A commit's summary (its actions decoded by their schemas; `version` only names it in an error). */
export function parseCommit(table: string, text: string, version?: number): CommitSummary {
  const txns: TxnAction[] = [];
  let metaData: MetaDataAction | undefined;
  let protocol: ProtocolAction | undefined;
  let rows = 0;
  let rescued = 0;
  let files = 0;
  let bytes = 0;
  for (const action of parseActions({ table, version }, text)) {
    if ('txn' in action) txns.push(action.txn);
    else if ('metaData' in action) metaData = action.metaData;
    else if ('protocol' in action) protocol = action.protocol;
    else if ('add' in action) {
      files += 1;
      bytes += action.add.size;
      rows += rowsOf(action.add);
    } else if ('commitInfo' in action) rescued += action.commitInfo.inlet?.rescuedRows ?? 0;
  }
  const ids = [sinkAppId(table), sinkPartAppId(table)];
  return {
    ours: txns.some((t) => ids.includes(t.appId)),
    manifestVersion: txns.find((t) => t.appId === sinkAppId(table))?.version,
    txns,
    metaData,
    protocol,
    schema: metaData ? fromDeltaSchemaString(metaData.schemaString, metaData.partitionColumns) : undefined,
    rows,
    rescued,
    files,
    bytes,
  };
}

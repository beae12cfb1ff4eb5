import { createHash } from 'node:crypto';
import { type ProtocolAction, RESCUED_ROWS_TAG } from './log-state.ts';
import type { DataFile } from './parquet-file.ts';
import { fromDeltaSchemaString, type TableSchema, toDeltaSchemaString } from './schema.ts';
import { LEGACY_PROTOCOL } from './table-features.ts';

/**
 * The Delta transaction log as this sink writes it (delta-io/delta PROTOCOL.md; sections cited in
 * docs/bronze.md): one newline-delimited JSON file per version, `_delta_log/<version, 20 digits>.json`.
 */
export function logKey(deltaVersion: number): string {
  return `_delta_log/${String(deltaVersion).padStart(20, '0')}.json`;
}

/** Manifest version v (1-based) is Delta version v-1 (0-based, what Delta readers report). */
export const deltaVersionOf = (manifestVersion: number) => manifestVersion - 1;

/** The `txn` appId: a reader (or a replay of ours) finds which manifest version a commit carries. */
export const sinkAppId = (table: string) => `inlet-bronze-${table}`;

/** A stable UUID for the table's metaData.id: the same on every replay of version 0. */
function tableId(table: string, location: string): string {
  const h = createHash('sha256').update(`${table}\n${location}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface CommitInput {
  readonly table: string;
  readonly location: string;
  readonly manifestVersion: number;
  readonly batchIds: readonly string[];
  /** The schema after this commit, and whether it differs from the previous one (or this is version 0). */
  readonly schema: TableSchema;
  readonly schemaChanged: boolean;
  readonly files: ReadonlyArray<Omit<DataFile, 'bytes'> & { readonly size: number }>;
  /** Landing files of the version that no longer exist (nothing to read), for the record. */
  readonly missingSources: readonly string[];
  /**
   * Landing files read at another write than the manifest names (path identity, rewritten since the
   * event): cleanSource leaves them (shared/bronze/version-reads.ts). Written only when there are some.
   */
  readonly rewrittenSources?: readonly string[];
  /** epoch ms; the manifest's commit time, so a replay writes the same commit. */
  readonly timestamp: number;
  /** The protocol this commit sets (table-features.ts); version 0 without one gets reader 1 / writer 2. */
  readonly protocol?: ProtocolAction;
}

/** The actions of one commit, in the order PROTOCOL.md's examples use. */
export function buildCommit(input: CommitInput): string {
  const deltaVersion = deltaVersionOf(input.manifestVersion);
  const rows = input.files.reduce((sum, f) => sum + f.rows, 0);
  const rescued = input.files.reduce((sum, f) => sum + f.rescued, 0);
  const actions: unknown[] = [
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
          rescuedRows: rescued,
          missingSources: input.missingSources,
          ...(input.rewrittenSources?.length ? { rewrittenSources: input.rewrittenSources } : {}),
        },
      },
    },
  ];
  const protocol = input.protocol ?? (deltaVersion === 0 ? LEGACY_PROTOCOL : undefined);
  if (protocol) actions.push({ protocol });
  if (deltaVersion === 0 || input.schemaChanged) {
    actions.push({
      metaData: {
        id: tableId(input.table, input.location),
        name: input.table,
        format: { provider: 'parquet', options: {} },
        schemaString: toDeltaSchemaString(input.schema),
        partitionColumns: [],
        configuration: {},
        createdTime: input.timestamp,
      },
    });
  }
  actions.push({
    txn: { appId: sinkAppId(input.table), version: input.manifestVersion, lastUpdated: input.timestamp },
  });
  for (const file of input.files) {
    actions.push({
      add: {
        path: file.path,
        partitionValues: {},
        size: file.size,
        modificationTime: input.timestamp,
        dataChange: true,
        stats: JSON.stringify({ numRecords: file.rows }),
        // In the file's own action (not only commitInfo) so a checkpoint, which drops commitInfo, keeps it.
        tags: { [RESCUED_ROWS_TAG]: String(file.rescued) },
      },
    });
  }
  return `${actions.map((a) => JSON.stringify(a)).join('\n')}\n`;
}

/** What a committed log entry says, as far as the sink and `inlet table` need it. */
export interface CommitSummary {
  /** The manifest version from our `txn`, undefined for a commit some other writer made. */
  readonly manifestVersion?: number;
  /** The schema set by this commit's metaData, if it has one. */
  readonly schema?: TableSchema;
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
  /** Bytes of the data files it adds. */
  readonly bytes: number;
}

export function parseCommit(table: string, text: string): CommitSummary {
  let manifestVersion: number | undefined;
  let schema: TableSchema | undefined;
  let rows = 0;
  let rescued = 0;
  let files = 0;
  let bytes = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const action = JSON.parse(line) as {
      txn?: { appId: string; version: number };
      metaData?: { schemaString: string };
      add?: { stats?: string; size?: number };
      commitInfo?: { inlet?: { rescuedRows?: number } };
    };
    if (action.txn?.appId === sinkAppId(table)) manifestVersion = action.txn.version;
    if (action.metaData) schema = fromDeltaSchemaString(action.metaData.schemaString);
    if (action.add) {
      files += 1;
      bytes += action.add.size ?? 0;
      rows += action.add.stats
        ? ((JSON.parse(action.add.stats) as { numRecords?: number }).numRecords ?? 0)
        : 0;
    }
    if (action.commitInfo?.inlet?.rescuedRows) rescued += action.commitInfo.inlet.rescuedRows;
  }
  return { manifestVersion, schema, rows, rescued, files, bytes };
}

import type { MetaDataAction, ProtocolAction, TxnAction } from './delta-actions.ts';
import { type CommitSummary, parseCommit, positionOf } from './delta-log.ts';
import { UnwritableTableError } from './errors.ts';
import type { DeltaStore, SinkPosition } from './ports.ts';
import { fromDeltaSchemaString, type TableSchema } from './schema.ts';
import { replayLog } from './snapshot.ts';
import { protocolProblems } from './table-features.ts';

/** One of our commits the cursor does not count yet: what it added. */
export interface OurCommit {
  readonly version: number;
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
  readonly bytes: number;
}

/**
 * What the sink needs of its Delta table to write the next commit: the latest version, protocol, metaData
 * (the schema lives there, not on the cursor) and txns (where the sink stands), and its own commits the
 * cursor has not counted. Kept up to date in memory as the run commits, so a run replays the log once.
 */
export interface TableHead {
  version: number;
  protocol?: ProtocolAction;
  metaData?: MetaDataAction;
  readonly txns: Map<string, TxnAction>;
  /** The version `_last_checkpoint` names (-1: none). */
  lastCheckpoint: number;
  /** Our commits after the cursor's Delta version, in order. */
  uncounted: OurCommit[];
}

/** The table's head; `countedThrough` is the cursor's Delta version (our commits after it are uncounted). */
export async function loadHead(delta: DeltaStore, table: string, countedThrough: number): Promise<TableHead> {
  const replay = await replayLog(delta, { keepAfter: countedThrough, table });
  const head: TableHead = {
    version: replay.version,
    protocol: replay.protocol,
    metaData: replay.metaData,
    txns: new Map(replay.txns),
    lastCheckpoint: replay.lastCheckpoint,
    uncounted: [],
  };
  for (const { version, text } of replay.commits) {
    const summary = parseCommit(table, text, version);
    if (summary.ours) head.uncounted.push(ourCommit(version, summary));
  }
  return head;
}

function ourCommit(version: number, { rows, rescued, files, bytes }: CommitSummary): OurCommit {
  return { version, rows, rescued, files, bytes };
}

/** Applies the next commit (`head.version + 1`) the run wrote or found, and says what it was. */
export function applyToHead(head: TableHead, table: string, version: number, text: string): CommitSummary {
  if (version !== head.version + 1)
    throw new Error(`applying Delta version ${version} to a head at ${head.version}`);
  const summary = parseCommit(table, text, version);
  if (summary.protocol) head.protocol = summary.protocol;
  if (summary.metaData) head.metaData = summary.metaData;
  for (const t of summary.txns) head.txns.set(t.appId, t);
  head.version = version;
  if (summary.ours) head.uncounted.push(ourCommit(version, summary));
  return summary;
}

export const headPosition = (head: TableHead, table: string): SinkPosition => positionOf(table, head.txns);

export const headSchema = (head: TableHead): TableSchema | undefined =>
  head.metaData
    ? fromDeltaSchemaString(head.metaData.schemaString, head.metaData.partitionColumns)
    : undefined;

/**
 * Refuses a table this writer cannot append to correctly: a protocol it does not implement (PROTOCOL.md
 * "Table Features": writers must implement every listed feature; legacy writer versions past 2 imply
 * CHECK constraints, generated or identity columns, change data feed or column mapping: `protocolProblems`),
 * partition columns other than `partitionBy` (PROTOCOL.md "Change Metadata": a table's `partitionColumns`
 * describe every file already written; changing them means rewriting them all), or a column invariant
 * (writer version 2 must enforce `delta.invariants`; this writer evaluates no SQL).
 */
export function checkWritable(
  head: TableHead,
  table: string,
  location: string,
  partitionBy: readonly string[] = [],
): void {
  const problems: string[] = [];
  if (head.version >= 0 && (!head.protocol || !head.metaData))
    problems.push('its log has commits but no protocol or metaData action');
  if (head.protocol) problems.push(...protocolProblems(head.protocol));
  const partitioned = head.metaData?.partitionColumns;
  if (partitioned && partitioned.join('\n') !== partitionBy.join('\n'))
    problems.push(
      `partitionBy is [${partitionBy.join(', ')}] but the table is ${partitioned.length === 0 ? 'not partitioned' : `partitioned by [${partitioned.join(', ')}]`}: partition columns cannot change after the first commit without rewriting every file; set partitionBy back, or give the table a new location (a new table)`,
    );
  if (head.metaData?.schemaString.includes('"delta.invariants"'))
    problems.push('a column has a delta.invariants constraint');
  if (problems.length > 0) throw new UnwritableTableError(table, location, problems);
}

import pLimit from 'p-limit';
import { InletError } from '../kernel/errors.ts';
import {
  CHECKPOINT_FILE_COLUMNS,
  CHECKPOINT_STATE_COLUMNS,
  CheckpointWriter,
  checkpointName,
  checkpointPartName,
  LAST_CHECKPOINT,
  type LastCheckpoint,
  readCheckpointActions,
} from './checkpoint.ts';
import type {
  AddAction,
  MetaDataAction,
  ProtocolAction,
  RemoveAction,
  StateAction,
  TxnAction,
} from './delta-actions.ts';
import { InvalidDeltaLogError } from './errors.ts';
import { applyAction, applyCommit, emptyLogState, type LogState } from './log-state.ts';
import type { DeltaStore } from './ports.ts';
import { effectiveRetentionMs } from './retention.ts';

/**
 * A Delta table's log replayed the way a reader does it (PROTOCOL.md "Last Checkpoint File"): the checkpoint
 * `_last_checkpoint` names, then the JSON commits after it, listed from there. What is held in memory is the
 * small part of the state (protocol, metaData, txns) and the file actions of the commits after the
 * checkpoint; the checkpoint's files are streamed again on demand (`liveFiles`), a row group at a time.
 */
export interface LogReplay {
  /** The bronze table replayed, when the caller named it (for errors). */
  readonly table?: string;
  /** The version replayed to; -1 for an empty log. */
  readonly version: number;
  readonly protocol?: ProtocolAction;
  readonly metaData?: MetaDataAction;
  readonly txns: ReadonlyMap<string, TxnAction>;
  /** The checkpoint the replay started from, if one was usable. */
  readonly checkpoint?: { readonly version: number; readonly files: readonly string[] };
  /** The version `_last_checkpoint` names (-1: none): the sink's next checkpoint is due from it. */
  readonly lastCheckpoint: number;
  /** File actions of the commits after the checkpoint, reconciled among themselves. */
  readonly tail: {
    readonly adds: ReadonlyMap<string, AddAction>;
    readonly removes: ReadonlyMap<string, RemoveAction>;
  };
  /** JSON commits read after the checkpoint. */
  readonly commitsRead: number;
  /** With `keepAfter`: the text of every commit after that version (up to the replayed one), in order. */
  readonly commits: ReadonlyArray<{ readonly version: number; readonly text: string }>;
}

/** Commit reads in flight at once: a replay after a checkpoint reads up to `checkpointInterval` of them. */
const COMMIT_READS = 8;

async function lastCheckpoint(delta: DeltaStore): Promise<LastCheckpoint | undefined> {
  const bytes = await delta.getLogFile(LAST_CHECKPOINT);
  if (!bytes) return undefined;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Partial<LastCheckpoint>;
    return typeof parsed.version === 'number' ? (parsed as LastCheckpoint) : undefined;
  } catch {
    // A hint, never the truth (PROTOCOL.md "Last Checkpoint File"): unreadable means replay the log.
    return undefined;
  }
}

const checkpointFiles = (hint: LastCheckpoint) =>
  hint.parts && hint.parts > 1
    ? Array.from({ length: hint.parts }, (_, i) => checkpointPartName(hint.version, i + 1, hint.parts ?? 1))
    : [checkpointName(hint.version)];

/** A checkpoint that is missing or cannot be parsed: a reader replays the log instead. */
class CheckpointUnreadableError extends Error {
  constructor(name: string, cause?: unknown) {
    super(`checkpoint file ${name} is missing or unreadable`, { cause });
    this.name = 'CheckpointUnreadableError';
  }
}

/**
 * Every action of a checkpoint's files (in `columns`), streamed. A missing part or bytes that are not a
 * checkpoint are `CheckpointUnreadableError`; a failed read is the store's error, as any other call's.
 */
async function* checkpointActions(
  delta: DeltaStore,
  checkpoint: { readonly version: number; readonly files: readonly string[] },
  columns: typeof CHECKPOINT_STATE_COLUMNS,
  table: string | undefined,
): AsyncGenerator<StateAction> {
  for (const name of checkpoint.files) {
    const file = await delta.openLogFile(name);
    if (!file) throw new CheckpointUnreadableError(name);
    const actions = readCheckpointActions(file, columns, { table, version: checkpoint.version, file: name });
    for (;;) {
      let next: IteratorResult<StateAction>;
      try {
        next = await actions.next();
      } catch (error) {
        // A row that is no action is a checkpoint no reader can use, as are bytes that are no Parquet.
        if (error instanceof InletError && !(error instanceof InvalidDeltaLogError)) throw error;
        throw new CheckpointUnreadableError(name, error);
      }
      if (next.done) break;
      yield next.value;
    }
  }
}

/**
 * The table's log up to `upTo` (default: the newest version). A missing or unreadable checkpoint only
 * costs a replay from version 0 (readers must not assume checkpoints exist); a gap in the commits is an
 * error, never skipped. `keepAfter` also keeps the texts of the commits after that version, read in the same
 * listing even when they are older than the checkpoint (the sink counts its commits since its cursor).
 */
export async function replayLog(
  delta: DeltaStore,
  options: {
    readonly upTo?: number;
    readonly keepAfter?: number;
    /** The bronze table, named in the error for a log entry that is no Delta action. */
    readonly table?: string;
  } = {},
): Promise<LogReplay> {
  const upTo = options.upTo ?? Number.POSITIVE_INFINITY;
  const state = emptyLogState();
  const hint = await lastCheckpoint(delta);
  let checkpoint: LogReplay['checkpoint'];
  if (hint && hint.version <= upTo) {
    const files = checkpointFiles(hint);
    try {
      const at = { version: hint.version, files };
      for await (const action of checkpointActions(delta, at, CHECKPOINT_STATE_COLUMNS, options.table))
        applyAction(state, action);
      checkpoint = { version: hint.version, files };
      state.version = hint.version;
    } catch (error) {
      if (!(error instanceof CheckpointUnreadableError)) throw error;
      state.protocol = undefined;
      state.metaData = undefined;
      state.txns.clear();
    }
  }
  const from = checkpoint?.version ?? -1;
  const listAfter = Math.min(from, options.keepAfter ?? from);
  const listed = (await delta.listCommits(listAfter >= 0 ? listAfter : undefined)).filter(
    (v) => v > listAfter && v <= upTo,
  );
  // Versions are contiguous (each commit is a conditional put of the next one); a gap is a broken table.
  listed.forEach((version, i) => {
    const expected = (listAfter >= 0 ? listAfter : -1) + 1 + i;
    if (version !== expected)
      throw new InletError(`Delta log has no version ${expected} before ${version}`, { retryable: false });
  });
  const limit = pLimit(COMMIT_READS);
  const texts = await Promise.all(
    listed.map((version) =>
      limit(async () => {
        const text = await delta.getCommit(version);
        if (text === undefined)
          throw new InletError(`Delta version ${version} vanished`, { retryable: true });
        return { version, text };
      }),
    ),
  );
  let commitsRead = 0;
  for (const { version, text } of texts) {
    if (version <= from) continue;
    applyCommit(state, version, text, { table: options.table });
    commitsRead += 1;
  }
  if (state.version < from) state.version = from;
  return {
    table: options.table,
    version: state.version,
    protocol: state.protocol,
    metaData: state.metaData,
    txns: state.txns,
    checkpoint,
    lastCheckpoint: hint?.version ?? -1,
    tail: { adds: state.adds, removes: state.removes },
    commitsRead,
    commits: options.keepAfter === undefined ? [] : texts.filter((c) => c.version > (options.keepAfter ?? 0)),
  };
}

/**
 * The replay's file actions: the checkpoint's (streamed again, minus the paths the commits after it
 * touched), then the commits' own, sorted by path. Live files (`add`) and tombstones (`remove`) alike.
 */
export async function* replayFiles(delta: DeltaStore, replay: LogReplay): AsyncGenerator<StateAction> {
  const { adds, removes } = replay.tail;
  if (replay.checkpoint)
    for await (const action of checkpointActions(
      delta,
      replay.checkpoint,
      CHECKPOINT_FILE_COLUMNS,
      replay.table,
    )) {
      const path = 'add' in action ? action.add.path : 'remove' in action ? action.remove.path : undefined;
      if (path !== undefined && !adds.has(path) && !removes.has(path)) yield action;
    }
  const byPath = <T extends { path: string }>(xs: Iterable<T>) =>
    [...xs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const add of byPath(adds.values())) yield { add };
  for (const remove of byPath(removes.values())) yield { remove };
}

export interface Snapshot {
  readonly state: LogState;
  /** The checkpoint the replay started from, if one was usable. */
  readonly checkpointVersion?: number;
  /** JSON commits read after it. */
  readonly commitsRead: number;
}

/** The whole state in memory (tests and small tables); the sink and `inlet table` stream it instead. */
export async function loadSnapshot(
  delta: DeltaStore,
  upTo: number = Number.POSITIVE_INFINITY,
): Promise<Snapshot> {
  const replay = await replayLog(delta, { upTo });
  const state = emptyLogState();
  state.version = replay.version;
  state.protocol = replay.protocol;
  state.metaData = replay.metaData;
  for (const [id, txn] of replay.txns) state.txns.set(id, txn);
  for await (const action of replayFiles(delta, replay)) applyAction(state, action);
  return { state, checkpointVersion: replay.checkpoint?.version, commitsRead: replay.commitsRead };
}

/**
 * Whether a checkpoint is due once the table is at `version`: it crossed a multiple of `interval` since the
 * last checkpoint (never at version 0, Spark's rule). With every commit ours and none missed that is every
 * `interval`th version; a version another writer took, or a checkpoint a crash left unwritten, moves it to
 * the next commit of ours. Any writer may checkpoint any version (PROTOCOL.md "Checkpoints").
 */
export const checkpointDue = (version: number, lastCheckpoint: number, interval: number) =>
  version > 0 && Math.floor(version / interval) > Math.floor(Math.max(lastCheckpoint, 0) / interval);

/** When a checkpoint is written (`now`, epoch ms) and the configured retention of removed files. */
export interface TombstoneExpiry {
  readonly now: number;
  /** The table's own `delta.deletedFileRetentionDuration` wins when longer. */
  readonly retentionMs: number;
}

/**
 * Writes the checkpoint of `deltaVersion` (already committed) and points `_last_checkpoint` at it, in
 * bounded memory: the previous checkpoint is streamed into the new one a row group at a time (minus what
 * the commits since changed), the commits' own files follow. Both files are overwrites of the same content,
 * so a crash before, between or after them is repaired by doing the same again (PROTOCOL.md "Classic
 * checkpoint": racing writers of one checkpoint write the same information). `_last_checkpoint` never moves
 * back: an older replay leaves a newer pointer alone. With `tombstones`, the tombstones expired by then are
 * left out (without, every one is kept).
 */
export async function writeCheckpoint(
  delta: DeltaStore,
  deltaVersion: number,
  rowGroupRows?: number,
  table?: string,
  tombstones?: TombstoneExpiry,
): Promise<LastCheckpoint> {
  const replay = await replayLog(delta, { upTo: deltaVersion, table });
  if (replay.version !== deltaVersion)
    throw new InletError(
      `cannot checkpoint Delta version ${deltaVersion}: the log ends at ${replay.version}`,
      {
        retryable: true,
      },
    );
  const out = delta.streamLogFile(checkpointName(deltaVersion));
  let written: Omit<LastCheckpoint, 'version'>;
  try {
    const writer = new CheckpointWriter(out, rowGroupRows);
    // Spark's order: protocol, metaData, txns (by appId), then the files.
    if (replay.protocol) await writer.write({ protocol: replay.protocol });
    if (replay.metaData) await writer.write({ metaData: replay.metaData });
    for (const txn of [...replay.txns.values()].sort((a, b) => a.appId.localeCompare(b.appId)))
      await writer.write({ txn });
    // PROTOCOL.md "Checkpoints": the files "recently removed and not yet expired"; a tombstone expires once
    // the retention has passed since its `deletionTimestamp` ("Add File and Remove File"). Without a time
    // it could be from any moment: kept.
    const expiredBefore =
      tombstones && tombstones.now - effectiveRetentionMs(tombstones.retentionMs, replay.metaData);
    for await (const action of replayFiles(delta, replay)) {
      const at = 'remove' in action ? action.remove.deletionTimestamp : undefined;
      if (expiredBefore !== undefined && typeof at === 'number' && at < expiredBefore) continue;
      await writer.write(action);
    }
    written = await writer.finish();
    await out.close();
  } catch (error) {
    await out.abort().catch(() => undefined);
    throw error;
  }
  const last: LastCheckpoint = { version: deltaVersion, ...written };
  const current = await lastCheckpoint(delta);
  if (!current || current.version <= deltaVersion)
    await delta.putLogFile(LAST_CHECKPOINT, JSON.stringify(last));
  return last;
}

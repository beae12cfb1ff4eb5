import { InletError } from '../errors.ts';
import {
  buildCheckpoint,
  checkpointName,
  LAST_CHECKPOINT,
  type LastCheckpoint,
  readCheckpoint,
} from './checkpoint.ts';
import { applyCommit, emptyLogState, type LogState } from './log-state.ts';
import type { DeltaStore } from './ports.ts';

export interface Snapshot {
  readonly state: LogState;
  /** The checkpoint the replay started from, if one was usable. */
  readonly checkpointVersion?: number;
  /** JSON commits read after it. */
  readonly commitsRead: number;
}

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

/**
 * The table's state at `upTo` (default: the newest version), the way a Delta reader builds it: from the
 * checkpoint `_last_checkpoint` names when it is not newer than `upTo`, then the JSON commits after it. A
 * missing or unreadable checkpoint only costs a full replay; the commits are the truth.
 */
export async function loadSnapshot(
  delta: DeltaStore,
  upTo: number = Number.POSITIVE_INFINITY,
): Promise<Snapshot> {
  let state = emptyLogState();
  let checkpointVersion: number | undefined;
  const hint = await lastCheckpoint(delta);
  if (hint && hint.version <= upTo) {
    const bytes = await delta.getLogFile(checkpointName(hint.version));
    if (bytes) {
      try {
        state = await readCheckpoint(hint.version, bytes);
        checkpointVersion = hint.version;
      } catch {
        state = emptyLogState();
      }
    }
  }
  let commitsRead = 0;
  for (const version of await delta.listCommits()) {
    if (version <= state.version || version > upTo) continue;
    // Versions are contiguous (the commit is a conditional put of the next one); a gap is a broken table.
    if (version !== state.version + 1)
      throw new InletError(`Delta log has no version ${state.version + 1} before ${version}`, {
        retryable: false,
      });
    const text = await delta.getCommit(version);
    if (text === undefined) throw new InletError(`Delta version ${version} vanished`, { retryable: true });
    applyCommit(state, version, text);
    commitsRead += 1;
  }
  return { state, checkpointVersion, commitsRead };
}

/** Checkpoint versions for an interval: every `interval`th version, never version 0 (Spark's rule). */
export const checkpointDue = (deltaVersion: number, interval: number) =>
  deltaVersion > 0 && deltaVersion % interval === 0;

/**
 * Writes the checkpoint of `deltaVersion` (already committed) and points `_last_checkpoint` at it. Both are
 * plain overwrites of deterministic content, so a crash before, between or after them is repaired by the
 * next run doing the same (PROTOCOL.md "Classic checkpoint": racing writers of one checkpoint write the
 * same information). `_last_checkpoint` never moves back: an older replay leaves a newer pointer alone.
 */
export async function writeCheckpoint(delta: DeltaStore, deltaVersion: number): Promise<LastCheckpoint> {
  const { state } = await loadSnapshot(delta, deltaVersion);
  if (state.version !== deltaVersion)
    throw new InletError(
      `cannot checkpoint Delta version ${deltaVersion}: the log ends at ${state.version}`,
      {
        retryable: true,
      },
    );
  const { bytes, last } = buildCheckpoint(state);
  await delta.putLogFile(checkpointName(deltaVersion), bytes);
  const current = await lastCheckpoint(delta);
  if (!current || current.version <= deltaVersion)
    await delta.putLogFile(LAST_CHECKPOINT, JSON.stringify(last));
  return last;
}

import type { Clock } from '../kernel/clock.ts';
import { dataFileKeyOf } from './partition-paths.ts';
import { effectiveRetentionMs } from './retention.ts';

export { tableRetentionMs } from './retention.ts';

import type { DeltaStore } from './ports.ts';
import { replayFiles, replayLog } from './snapshot.ts';
import { readerProblems } from './table-features.ts';

export { DEFAULT_RETENTION_MS, MIN_RETENTION_MS } from './maintenance-config.ts';

import type { TableFiles } from './table-files.ts';

/** Keys per DeleteObjects call (S3's limit). */
const DELETE_BATCH = 1000;

export interface VacuumOptions {
  readonly table: string;
  /**
   * The configured retention (the config refuses less than MIN_RETENTION_MS); the table's own
   * `delta.deletedFileRetentionDuration` wins when longer.
   */
  readonly retentionMs: number;
  /** Only say what would be deleted. */
  readonly dryRun?: boolean;
}

export interface VacuumResult {
  /** Data files deleted (or, dry, that would be). */
  readonly filesDeleted: number;
  readonly bytesDeleted: number;
  /** Files under the root that are not live but still within the retention. */
  readonly filesKept: number;
  /** The retention applied, in ms. */
  readonly retentionMs: number;
}

/** Hidden names Delta's VACUUM never touches (`_delta_log/`, `.x`, `_x`), partition directories (`col=v`) aside. */
export function isHidden(path: string): boolean {
  return path
    .split('/')
    .some((part) => (part.startsWith('_') || part.startsWith('.')) && !part.includes('='));
}

/**
 * Deletes the data files no version within the retention names (docs/protocol.md "Bronze optimize and
 * vacuum", V-I1 and V-I2): a file not live at the latest version whose tombstone is older than the
 * retention, or which no commit removed (an orphan of an abandoned attempt) and whose upload is older than
 * the retention. Everything else stays, including a file a writer has uploaded and not committed yet.
 */
export async function vacuumTable(
  deps: Pick<Clock, 'now'> & { readonly delta: DeltaStore; readonly files: TableFiles },
  options: VacuumOptions,
): Promise<VacuumResult> {
  const replay = await replayLog(deps.delta, { table: options.table });
  const retentionMs = effectiveRetentionMs(options.retentionMs, replay.metaData);
  const result = { filesDeleted: 0, bytesDeleted: 0, filesKept: 0, retentionMs };
  // No table, or one this code cannot read right (deletion vectors name files too): touch nothing.
  if (replay.version < 0 || !replay.protocol || readerProblems(replay.protocol).length > 0) return result;
  const live = new Set<string>();
  const removedAt = new Map<string, number>();
  for await (const action of replayFiles(deps.delta, replay)) {
    // Paths in the log are URI-encoded (PROTOCOL.md "Add File and Remove File"); listed keys are not.
    if ('add' in action) live.add(dataFileKeyOf(action.add.path));
    else if ('remove' in action)
      // A tombstone without a time could be from any moment: kept, never guessed old.
      removedAt.set(
        dataFileKeyOf(action.remove.path),
        action.remove.deletionTimestamp ?? Number.POSITIVE_INFINITY,
      );
  }
  const cutoff = deps.now() - retentionMs;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length > 0 && !options.dryRun) await deps.files.delete(batch);
    batch = [];
  };
  for await (const file of deps.files.list()) {
    if (isHidden(file.path) || live.has(file.path)) continue;
    // A tombstone says when the file left the table (Delta's rule); an orphan's upload is the latest it
    // could have been wanted.
    const since = removedAt.get(file.path) ?? file.lastModified;
    if (since >= cutoff) {
      result.filesKept += 1;
      continue;
    }
    batch.push(file.path);
    result.filesDeleted += 1;
    result.bytesDeleted += file.size;
    if (batch.length >= DELETE_BATCH) await flush();
  }
  await flush();
  return result;
}

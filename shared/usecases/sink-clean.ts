import { type CleanSourceConfig, parseS3Url } from '../bronze/config.ts';
import type { LandingCleaner, SinkCursorStore } from '../bronze/ports.ts';
import type { Log } from '../log.ts';
import type { BatchStore } from '../storage/batch-store.ts';
import { tailVersions } from './sink-tail.ts';

export interface CleanSourceDeps {
  readonly store: Pick<BatchStore, 'getManifest'>;
  readonly cursors: SinkCursorStore;
  readonly cleaner: LandingCleaner;
  readonly log: Log;
  /** epoch ms */
  readonly now: () => number;
}

export interface CleanResult {
  /** Manifest versions whose files were cleaned, in order. */
  readonly versions: number[];
  /** Landing files deleted or moved (a file already gone counts: a replay after a crash finds it so). */
  readonly files: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * cleanSource (docs/bronze.md): the landing files of manifest versions already in the Delta table (up to
 * `inDeltaThrough`) and committed at least `retentionDays` ago, deleted or moved, in version order, with
 * the clean cursor advanced after each version. Every step repeats safely, so a crash re-cleans at most one
 * version.
 */
export async function cleanSource(
  deps: CleanSourceDeps,
  table: string,
  config: CleanSourceConfig,
  inDeltaThrough: number,
  deadline: number,
): Promise<CleanResult> {
  const cleaned: number[] = [];
  let files = 0;
  let through = await deps.cursors.getCleaned(table);
  const to = config.moveTo ? parseS3Url(config.moveTo) : undefined;
  for await (const manifest of tailVersions(deps.store, table, through + 1)) {
    // Only what the Delta table already holds: a file of a version not yet written is still needed.
    if (manifest.version > inDeltaThrough) break;
    // Versions commit in order, so once one is too young, every later one is too.
    if (Date.parse(manifest.committedAt) + config.retentionDays * DAY_MS > deps.now()) break;
    if (deps.now() >= deadline) break;
    for (const file of manifest.files) {
      if (config.action === 'delete' || !to) await deps.cleaner.remove(file);
      else await deps.cleaner.move(file, to);
      files += 1;
    }
    if (!(await deps.cursors.advanceCleaned(table, through, manifest.version))) {
      deps.log.warn('clean cursor moved under us; stopping', { table, version: manifest.version });
      break;
    }
    through = manifest.version;
    cleaned.push(manifest.version);
  }
  if (cleaned.length > 0) deps.log.info('cleanSource cleaned landing files', { table, versions: cleaned });
  return { versions: cleaned, files };
}

import type { Log } from '../kernel/log.ts';
import { type AddAction, parseActions, type RemoveAction } from './delta-actions.ts';
import { dataFileKeyOf, partitionDirectory } from './partition-paths.ts';
import type { DeltaStore, SymlinkManifests } from './ports.ts';
import { replayFiles, replayLog } from './snapshot.ts';

/**
 * Where the manifests live under the table root: Delta's `GENERATE symlink_format_manifest` layout
 * (delta-io/delta, hooks/GenerateSymlinkManifest.scala), which Redshift Spectrum, Presto and Hive read
 * through `SymlinkTextInputFormat`.
 */
export const SYMLINK_MANIFEST_DIR = '_symlink_format_manifest';

export interface ProjectManifestsInput {
  readonly table: string;
  readonly delta: DeltaStore;
  readonly manifests: SymlinkManifests;
  /** `s3://bucket/prefix` of the table root, without a trailing slash. */
  readonly location: string;
  /** The Delta version to list (`Infinity`: the newest). */
  readonly version: number;
  /**
   * The version the manifests were last known to list: only partitions the commits after it touched are
   * written. Undefined: every partition (the first projection, or one whose record was lost).
   */
  readonly since: number | undefined;
  readonly log: Log;
}

/** Reads and writes of one manifest before leaving a racing writer's manifest to the next run. */
const ATTEMPTS = 3;

/**
 * Projects the table's live files at `version` into its symlink manifests (docs/bronze.md, "Symlink
 * manifests"): one per partition directory, each line the absolute path of a data file (Delta writes
 * `DeltaFileOperations.absolutePath(table, add.path)`: the table's location and the decoded path). Each
 * manifest records the version it lists and is replaced conditionally on what was read, so a projection of
 * an older version never replaces a newer one, whichever writer (the sink, the maintenance run) is late.
 * Like the catalog, the manifests are a projection of the log: a failure is logged and reported (`false`),
 * never thrown, and the next run repairs them.
 */
export async function projectManifests(input: ProjectManifestsInput): Promise<boolean> {
  const { table, location } = input;
  try {
    const replay = await replayLog(input.delta, {
      upTo: input.version,
      ...(input.since === undefined ? {} : { keepAfter: input.since }),
      table,
    });
    // No commit yet (the maintenance run's schedule can fire before the sink's first): no table to list, and a
    // root manifest written now would stay beside a partitioned table's own.
    if (replay.version < 0) return true;
    const partitionColumns = replay.metaData?.partitionColumns ?? [];
    const dirOf = (partitionValues: Readonly<Record<string, string | null>> | undefined, path: string) =>
      partitionColumns.length === 0
        ? ''
        : partitionValues
          ? partitionDirectory(partitionColumns.map((c) => [c, partitionValues[c] ?? null]))
          : dataFileKeyOf(path).replace(/[^/]*$/, '');
    // Every partition on a first projection; after it, those the commits since added to or removed from.
    const touched =
      input.since === undefined || partitionColumns.length === 0
        ? undefined
        : touchedDirs(replay.commits, table, dirOf);
    const lines = new Map<string, string[]>();
    for (const dir of touched ?? []) lines.set(dir, []);
    if (partitionColumns.length === 0) lines.set('', []);
    for await (const action of replayFiles(input.delta, replay)) {
      if (!('add' in action)) continue;
      const dir = dirOf(action.add.partitionValues, action.add.path);
      if (touched && !touched.has(dir)) continue;
      const list = lines.get(dir) ?? [];
      lines.set(dir, list);
      list.push(`${location}/${dataFileKeyOf(action.add.path)}`);
    }
    let inStep = true;
    for (const [dir, files] of lines) {
      const body = files
        .sort()
        .map((f) => `${f}\n`)
        .join('');
      if (!(await writeManifest(input.manifests, dir, body, replay.version))) {
        inStep = false;
        input.log.warn('bronze symlink manifest left to the next run: another writer kept changing it', {
          table,
          dir,
          deltaVersion: replay.version,
        });
      }
    }
    return inStep;
  } catch (error) {
    input.log.error('bronze symlink manifests not written; the next run repairs them', {
      table,
      location,
      deltaVersion: input.version,
      error: (error as Error).message,
    });
    return false;
  }
}

function touchedDirs(
  commits: ReadonlyArray<{ readonly version: number; readonly text: string }>,
  table: string,
  dirOf: (values: Readonly<Record<string, string | null>> | undefined, path: string) => string,
): Set<string> {
  const dirs = new Set<string>();
  for (const { version, text } of commits)
    for (const action of parseActions({ table, version }, text)) {
      const file: AddAction | RemoveAction | undefined =
        'add' in action ? action.add : 'remove' in action ? action.remove : undefined;
      if (!file) continue;
      const values = (file as { partitionValues?: Record<string, string | null> }).partitionValues;
      dirs.add(dirOf(values, file.path));
    }
  return dirs;
}

/** True when the manifest lists `version` or a later one; false after `ATTEMPTS` lost races. */
async function writeManifest(
  manifests: SymlinkManifests,
  dir: string,
  body: string,
  version: number,
): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await manifests.read(dir);
    if (current && current.version >= version) return true;
    if ((await manifests.write(dir, body, version, current?.etag)) === 'written') return true;
  }
  return false;
}

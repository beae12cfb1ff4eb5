import type { PipelineConfig } from '../config/pipeline-config.ts';
import type { BatchStore } from '../ingestion/batch-store.ts';
import { mapLimit } from '../ingestion/commit-group.ts';
import { tailVersions } from '../ingestion/manifest-tail.ts';
import type { ObjectRef } from '../ingestion/model.ts';
import { Router } from '../ingestion/routing.ts';
import type { Log } from '../kernel/log.ts';
import { type CleanSourceConfig, parseS3Url } from './config.ts';
import type { ArchiveTarget, CleanOutcome, FileClaims, LandingCleaner, SinkCursorStore } from './ports.ts';
import { sourceUrl, type VersionReads } from './version-reads.ts';

export interface CleanSourceDeps {
  readonly config: PipelineConfig;
  readonly store: Pick<BatchStore, 'getManifest'>;
  readonly cursors: SinkCursorStore;
  readonly cleaner: LandingCleaner;
  /**
   * What the sink read of a manifest version, from its Delta commits of it (`VersionCommits`); undefined
   * when the log does not hold them all.
   */
  readonly readsOf: (manifestVersion: number) => Promise<VersionReads | undefined>;
  /** Where the other tables that route a file stand on it; needed only when another table can route them. */
  readonly claims?: FileClaims;
  readonly log: Log;
  /** epoch ms */
  readonly now: () => number;
}

export interface CleanResult {
  /** Manifest versions whose files were cleaned, in order. */
  readonly versions: number[];
  /** Landing files deleted or moved (a file already gone counts: a replay after a crash finds it so). */
  readonly files: number;
  /**
   * Files of those versions left in place for good: the key holds another write than the one the table
   * read (a rewrite since), or the table read another write than the manifest names. Never deleted.
   */
  readonly left: number;
  /** The clean stopped on an error (retried next run; the table's Delta writes are not affected). */
  readonly failed: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Files cleaned at once: S3 deletes and copies are independent requests. */
const CONCURRENCY = 8;

/**
 * cleanSource (docs/bronze.md): the landing files of manifest versions already in the Delta table (up to
 * `inDeltaThrough`), committed at least `retentionDays` ago and held by every other table that routes them,
 * deleted or moved in version order, each conditional on the write the table read; the clean cursor
 * advanced after each version. Every step repeats safely, so a crash re-cleans at most one version.
 *
 * Never throws for a clean that fails (a denied delete, Object Lock, a missing bucket): it is logged,
 * returned as `failed` (the sink counts it) and retried by the next run, so it cannot fail the table's
 * Delta writes or hold its messages.
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
  let left = 0;
  let failed = false;
  const others = new OtherTables(deps, table);
  const to = archiveTarget(deps.config, table, config);
  try {
    let through = await deps.cursors.getCleaned(table);
    for await (const manifest of tailVersions(deps.store, table, through + 1)) {
      // Only what the Delta table already holds: a file of a version not yet written is still needed.
      if (manifest.version > inDeltaThrough) break;
      // Versions commit in order, so once one is too young, every later one is too.
      if (Date.parse(manifest.committedAt) + config.retentionDays * DAY_MS > deps.now()) break;
      if (deps.now() >= deadline) break;
      const reads = await deps.readsOf(manifest.version);
      if (!reads) {
        // The cursor says the version is in the table, the log has not all its commits: clean nothing.
        deps.log.error('cleanSource found no Delta commit of the version; not cleaning it', {
          table,
          version: manifest.version,
        });
        failed = true;
        break;
      }
      const read = manifest.files.filter((f) => !reads.missing.has(sourceUrl(f)));
      const waiting = await others.lacking(read);
      if (waiting) {
        deps.log.warn('cleanSource waits for another table to hold a file before removing it', {
          table,
          version: manifest.version,
          ...waiting,
        });
        break;
      }
      const version = await cleanVersion(deps, table, read, reads, to, deadline);
      files += version.files;
      left += version.left;
      if (version.error !== undefined) throw version.error;
      if (!version.complete) break;
      if (!(await deps.cursors.advanceCleaned(table, through, manifest.version))) {
        deps.log.warn('clean cursor moved under us; stopping', { table, version: manifest.version });
        break;
      }
      through = manifest.version;
      cleaned.push(manifest.version);
    }
  } catch (error) {
    failed = true;
    deps.log.error('cleanSource failed; retried by the next run', { table, error: String(error) });
  }
  if (cleaned.length > 0)
    deps.log.info('cleanSource cleaned landing files', { table, versions: cleaned, files, left });
  return { versions: cleaned, files, left, failed };
}

/** One version's files, at most CONCURRENCY at once; stops starting new ones after an error or the deadline. */
async function cleanVersion(
  deps: CleanSourceDeps,
  table: string,
  files: readonly ObjectRef[],
  reads: VersionReads,
  to: ArchiveTarget | undefined,
  deadline: number,
): Promise<{ files: number; left: number; complete: boolean; error?: unknown }> {
  let done = 0;
  let left = 0;
  let complete = true;
  let error: unknown;
  await mapLimit(files, CONCURRENCY, async (file) => {
    if (error !== undefined || deps.now() >= deadline) {
      complete = false;
      return;
    }
    const url = sourceUrl(file);
    let outcome: CleanOutcome;
    if (reads.rewritten.has(url)) {
      // The table read a later write of the key than the manifest names: removing the named write would be
      // removing what the table did not read, and removing the current one what the manifest does not name.
      outcome = {
        kind: 'left',
        reason: 'the table read a rewrite of the key, not the write its manifest names',
      };
    } else {
      try {
        outcome = to ? await deps.cleaner.move(file, to) : await deps.cleaner.remove(file);
      } catch (caught) {
        error ??= caught;
        complete = false;
        return;
      }
    }
    if (outcome.kind === 'left') {
      left += 1;
      deps.log.warn('cleanSource left a landing file in place', { table, file: url, reason: outcome.reason });
    } else done += 1;
  });
  return { files: done, left, complete, error };
}

function archiveTarget(
  config: PipelineConfig,
  table: string,
  clean: CleanSourceConfig,
): ArchiveTarget | undefined {
  if (clean.action !== 'move' || !clean.moveTo) return undefined;
  const allowOverwrites = config.tables.find((t) => t.name === table)?.allowOverwrites ?? false;
  return { ...parseS3Url(clean.moveTo), perWrite: allowOverwrites };
}

/**
 * The other tables that route a landing file (every live table whose routing matches it, as the batcher
 * routes its event) and whether each already holds it in its Delta table: its claim's batch committed at
 * a manifest version its sink cursor has passed. Config validation allows another table over a
 * cleanSource table's files only when it is a live bronze table, so this is the whole check.
 */
class OtherTables {
  private readonly router: Router;
  /** Manifest versions in each other table's Delta table, read once per run. */
  private readonly inDelta = new Map<string, Promise<number>>();

  constructor(
    private readonly deps: CleanSourceDeps,
    private readonly table: string,
  ) {
    this.router = new Router(deps.config);
  }

  /** The first file another table does not hold yet, and which table, or undefined when all do. */
  async lacking(
    files: readonly ObjectRef[],
  ): Promise<{ other: string; file: string; why: string } | undefined> {
    const checks = files.flatMap((file) => {
      const routed = this.router.route(file);
      if (routed.kind !== 'routed') return [];
      return routed.files
        .filter((f) => f.table !== this.table)
        .map((f) => ({ file, other: f.table, identity: f.identity }));
    });
    const results = await mapLimit(checks, CONCURRENCY, async (c) => ({
      ...c,
      why: await this.why(c.other, c.identity),
    }));
    const first = results.find((r) => r.why !== undefined);
    return first && { other: first.other, file: sourceUrl(first.file), why: first.why as string };
  }

  /** Why `other` does not hold the file yet, or undefined when it does. */
  private async why(other: string, identity: string): Promise<string | undefined> {
    const config = this.deps.config.tables.find((t) => t.name === other);
    if (!config?.bronze) return 'it has no bronze table, so nothing says when it is done with the file';
    if (!this.deps.claims) return 'the sink cannot read the ledger claims';
    const version = await this.deps.claims.committedVersion(other, identity);
    if (version === undefined) return 'no committed batch of it holds the file yet';
    let inDelta = this.inDelta.get(other);
    if (!inDelta) {
      // The other table's cursor: the last manifest version wholly in its Delta table.
      inDelta = this.deps.cursors.get(other).then((c) => c.manifestVersion);
      this.inDelta.set(other, inDelta);
    }
    const through = await inDelta;
    return version > through
      ? `its manifest version ${version} is not in its Delta table yet (${through})`
      : undefined;
  }
}

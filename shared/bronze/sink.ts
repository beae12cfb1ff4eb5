import { randomUUID } from 'node:crypto';
import type { PipelineConfig } from '../config/pipeline-config.ts';
import type { BatchStore } from '../ingestion/batch-store.ts';
import type { Clock } from '../kernel/clock.ts';
import { InletError } from '../kernel/errors.ts';
import type { Log } from '../kernel/log.ts';
import { CatalogProjection, type TableCatalog } from './catalog-sync.ts';
import { type BronzeConfig, bronzeLocation, partitionColumnsOf } from './config.ts';
import { commitAtNextVersion } from './delta-commit.ts';
import { comparePositions } from './delta-log.ts';
import { SinkTableMismatchError } from './errors.ts';
import { configuredRetentionMs } from './maintenance-config.ts';
import type {
  DeltaStore,
  FileClaims,
  LandingCleaner,
  ManifestHeads,
  ReadIdentity,
  SinkCursor,
  SinkCursorStore,
  SourceObjects,
  SymlinkManifests,
} from './ports.ts';
import { type CleanResult, cleanSource } from './sink-clean.ts';
import { checkpointDue, writeCheckpoint } from './snapshot.ts';
import { projectManifests } from './symlink-manifest.ts';
import { checkWritable, headPosition, headSchema, loadHead, type TableHead } from './table-head.ts';
import { VersionCommits } from './version-reads.ts';
import {
  DEFAULT_PART_LIMITS,
  OutOfTimeError,
  type PartLimits,
  planPart,
  writePart,
} from './write-version.ts';

/** The clock times the run's budget and backs off a commit that collided with another writer. */
export interface SinkDeps extends Clock {
  readonly config: PipelineConfig;
  /** Reads manifests. */
  readonly store: Pick<BatchStore, 'getManifest'>;
  readonly sources: SourceObjects;
  /** The Delta table at `s3://bucket/prefix`. */
  readonly deltaAt: (bucket: string, prefix: string) => DeltaStore;
  readonly cursors: SinkCursorStore;
  /** Needed only by tables with `cleanSource`. */
  readonly cleaner?: LandingCleaner;
  /** Needed only by a cleanSource table whose files another table routes too. */
  readonly claims?: FileClaims;
  readonly manifestBucket: string;
  /** For the lag of a run that stopped short; without it only a caught-up run reports its lag (0). */
  readonly heads?: ManifestHeads;
  readonly log: Log;
  /** A unique id per attempt at a part (in its data files' names). @default crypto.randomUUID */
  readonly newId?: () => string;
  /** @default DEFAULT_PART_LIMITS */
  readonly parts?: PartLimits;
  /** Actions per row group of the checkpoints it writes. @default CHECKPOINT_ROW_GROUP_ROWS (10,000) */
  readonly checkpointRows?: number;
  /** The Glue database tables with `catalog` are registered in; without it no table is. */
  readonly catalog?: { readonly tables: TableCatalog; readonly database: string };
  /** The symlink manifests of the table at `s3://bucket/prefix`; needed only by tables with `symlinkManifest`. */
  readonly manifestsAt?: (bucket: string, prefix: string) => SymlinkManifests;
}

export interface SinkOutcome {
  readonly table: string;
  /** Delta versions of ours the cursor counted in this call (written by it, or found after a crash). */
  readonly written: readonly number[];
  /** Manifest versions the cursor moved past in this call: wholly in the Delta table now. */
  readonly versions: readonly number[];
  /** False when the time budget ran out first: the caller asks for another run. */
  readonly caughtUp: boolean;
  /**
   * A part of a single landing file ran out of the invocation's time (its files are orphans, nothing
   * committed): that file may not fit any run, which an operator must see.
   */
  readonly outOfTime: boolean;
  /** Manifest versions whose landing files cleanSource deleted or moved in this call. */
  readonly cleaned?: readonly number[];
  readonly cursor: SinkCursor;
  /** What the commits in `written` added to the table. */
  readonly added: Added;
  /** Landing files cleanSource deleted or moved. */
  readonly cleanedFiles: number;
  /** Landing files cleanSource left in place for good (another write at the key than the table read). */
  readonly cleanLeft?: number;
  /** cleanSource stopped on an error this run (logged; retried by the next run). */
  readonly cleanFailed?: boolean;
  /** The table's Glue entry could not be brought in step this run (logged; the next run retries). */
  readonly catalogFailed?: boolean;
  /** The table's symlink manifests could not be written this run (logged; the next run retries). */
  readonly manifestsFailed?: boolean;
  /** Committed manifest versions not wholly in the Delta table when the call returned; undefined if unknown. */
  readonly behind: number | undefined;
}

export interface Added {
  readonly rows: number;
  readonly rescued: number;
  readonly dataFiles: number;
  readonly dataBytes: number;
  /** Landing files the parts committed in this call could not read (each logged with its reason). */
  readonly missingSources: number;
}

/**
 * A part started before the deadline may run this long past it: the handler keeps 60 s of an invocation
 * back, so a part that overruns is abandoned (`finishBy`) before Lambda would kill the whole batch.
 */
export const PART_GRACE_MS = 45_000;

/** One call's running totals. */
class Tally {
  readonly written: number[] = [];
  readonly versions: number[] = [];
  readonly added = { rows: 0, rescued: 0, dataFiles: 0, dataBytes: 0, missingSources: 0 };
  outOfTime = false;
  catalogFailed = false;
  manifestsFailed = false;
}

type Step =
  | { readonly kind: 'caughtUp' | 'stopped'; readonly cursor: SinkCursor }
  | { readonly kind: 'moved' };

/**
 * The bronze sink (docs/bronze.md, "Exactly once"): the table's committed manifest versions, strictly in
 * order from its cursor, each as one Delta commit or, when too big for one, as parts that each commit a
 * contiguous range of its files. Every commit goes to the next free Delta version and carries a `txn` that
 * says how far the table is; a replay reads the txns, so nothing is written twice and other writers' commits
 * are stepped over. The cursor then counts the commits, conditionally.
 */
export class SinkTable {
  private readonly catalog: CatalogProjection | undefined;

  constructor(private readonly deps: SinkDeps) {
    const catalog = deps.catalog;
    this.catalog =
      catalog &&
      new CatalogProjection({ catalog: catalog.tables, database: catalog.database, log: deps.log });
  }

  bronzeOf(table: string): BronzeConfig {
    const config = this.deps.config.tables.find((t) => t.name === table)?.bronze;
    if (!config) throw new InletError(`table ${table} has no bronze sink configured`, { retryable: false });
    return config;
  }

  /**
   * Writes every committed version past the cursor, until caught up or `deadline` (epoch ms) passes: no
   * part starts after it, and a part still running at `finishBy` is abandoned.
   */
  async catchUp(table: string, deadline: number, finishBy = deadline + PART_GRACE_MS): Promise<SinkOutcome> {
    const tally = new Tally();
    const config = this.bronzeOf(table);
    for (;;) {
      const step = await this.writeFromCursor(table, config, { deadline, finishBy }, tally);
      if (step.kind === 'moved') continue;
      const { cursor } = step;
      const base = {
        table,
        written: tally.written,
        versions: tally.versions,
        cursor,
        added: tally.added,
        catalogFailed: tally.catalogFailed,
        manifestsFailed: tally.manifestsFailed,
      };
      if (step.kind === 'stopped') {
        const behind = await this.behind(table, cursor);
        return { ...base, caughtUp: false, outOfTime: tally.outOfTime, cleanedFiles: 0, behind };
      }
      const clean = await this.clean(table, config, cursor, deadline);
      // The tail ended at the first absent manifest: nothing committed was left behind.
      return {
        ...base,
        caughtUp: true,
        outOfTime: false,
        cleaned: clean.versions,
        cleanedFiles: clean.files,
        cleanLeft: clean.left,
        cleanFailed: clean.failed,
        behind: 0,
      };
    }
  }

  /**
   * From the cursor on, adding to `tally`; `moved` when another run advanced the cursor first (an
   * overlapping redelivery), so the caller re-reads it and goes on.
   */
  private async writeFromCursor(
    table: string,
    config: BronzeConfig,
    time: { readonly deadline: number; readonly finishBy: number },
    tally: Tally,
  ): Promise<Step> {
    const { deps } = this;
    const { bucket, prefix } = bronzeLocation(table, config, deps.manifestBucket);
    const delta = deps.deltaAt(bucket, prefix);
    const location = `s3://${bucket}/${prefix}`;
    let cursor = await deps.cursors.get(table);
    // The up-to-date table costs one cursor read and one manifest read, no log read.
    let manifest = await deps.store.getManifest(table, cursor.manifestVersion + 1);
    if (!manifest)
      return { kind: 'caughtUp', cursor: await this.repairProjections(table, config, cursor, tally) };
    if (deps.now() >= time.deadline) return { kind: 'stopped', cursor };

    const head = await loadHead(delta, table, cursor.deltaVersion);
    checkWritable(head, table, location, partitionColumnsOf(config));
    const found = headPosition(head, table);
    // The log is the truth of what is written; it can be ahead of the cursor (a crash after a commit),
    // never behind it, unless the table's location changed or its log was deleted.
    if (comparePositions(found, cursor) < 0) throw new SinkTableMismatchError(table, location, cursor, found);
    const limits = deps.parts ?? DEFAULT_PART_LIMITS;
    const settled = await this.settle(table, config, { delta, location, head, cursor, limits }, time, tally);
    if (!settled) return { kind: 'moved' };
    cursor = settled;

    // The run that read the head writes at least one part, even if reading it took it past the deadline:
    // the part is still bounded by `finishBy`, and a run that only ever read would never move the table.
    let parts = 0;
    while (manifest) {
      if (manifest.version !== cursor.manifestVersion + 1) {
        manifest = await deps.store.getManifest(table, cursor.manifestVersion + 1);
        continue;
      }
      if (parts > 0 && deps.now() >= time.deadline) return { kind: 'stopped', cursor };
      parts += 1;
      const files = planPart(manifest, cursor.filesDone, {
        ...limits,
        maxFiles: Math.min(limits.maxFiles, cursor.partFiles ?? limits.maxFiles),
      });
      const start = { manifestVersion: cursor.manifestVersion, filesDone: cursor.filesDone };
      let prepared: Awaited<ReturnType<typeof writePart>>;
      try {
        prepared = await writePart(
          { ...deps, delta },
          {
            table,
            location,
            config,
            manifest,
            files,
            head,
            attempt: (deps.newId ?? randomUUID)(),
            limits,
            finishBy: time.finishBy,
            identity: this.identityOf(table),
          },
        );
      } catch (error) {
        if (!(error instanceof OutOfTimeError)) throw error;
        await this.shrinkParts(table, cursor, manifest.version, files, tally);
        return { kind: 'stopped', cursor };
      }
      const outcome = await commitAtNextVersion({ ...deps, delta }, head, table, prepared.body, start);
      if (outcome.kind === 'stale') {
        // Another writer changed the metaData or protocol under this part: write it again against theirs.
        deps.log.warn('bronze table changed by another writer; rewriting the part', { table, location });
        checkWritable(head, table, location, partitionColumnsOf(config));
        continue;
      }
      if (outcome.kind === 'committed') {
        deps.log.info('bronze commit written', {
          table,
          deltaVersion: outcome.version,
          manifestVersion: manifest.version,
          sourceFiles: `${files.from}-${files.to - 1} of ${manifest.files.length}`,
          rows: prepared.rows,
          location,
        });
        for (const { url, reason } of prepared.missing)
          deps.log.warn('bronze landing file missing', {
            table,
            manifestVersion: manifest.version,
            file: url,
            reason,
          });
        tally.added.missingSources += prepared.missing.length;
      } else
        deps.log.warn('bronze part written by another run first', {
          table,
          manifestVersion: manifest.version,
        });
      const next = await this.settle(table, config, { delta, location, head, cursor, limits }, time, tally);
      if (!next) return { kind: 'moved' };
      cursor = next;
    }
    return { kind: 'caughtUp', cursor };
  }

  /**
   * Writes a checkpoint if one is due, then counts our commits the cursor does not count yet and moves it
   * to where the log says the table is (conditionally: undefined when another run moved it first). A crash
   * between the two replays both: the next run finds the commit uncounted and the checkpoint still due.
   */
  private async settle(
    table: string,
    config: BronzeConfig,
    at: {
      readonly delta: DeltaStore;
      readonly location: string;
      readonly head: TableHead;
      readonly cursor: SinkCursor;
      readonly limits: PartLimits;
    },
    time: { readonly deadline: number },
    tally: Tally,
  ): Promise<SinkCursor | undefined> {
    const { head, cursor } = at;
    // Not past the deadline: a checkpoint of a big table takes a while, and one left unwritten stays due
    // (until `_last_checkpoint` moves) for the next commit's run.
    if (
      checkpointDue(head.version, head.lastCheckpoint, config.checkpointInterval) &&
      this.deps.now() < time.deadline
    ) {
      // Tombstones expire by vacuum's retention (the table's maintenance, else Delta's default week).
      const checkpoint = await writeCheckpoint(at.delta, head.version, this.deps.checkpointRows, table, {
        now: this.deps.now(),
        retentionMs: configuredRetentionMs(config.maintenance),
      });
      head.lastCheckpoint = head.version;
      this.deps.log.info('bronze checkpoint written', { table, ...checkpoint, location: at.location });
    }
    const last = head.uncounted.at(-1);
    if (!last) return cursor;
    const sum = (key: 'rows' | 'rescued') => head.uncounted.reduce((total, c) => total + c[key], 0);
    // Before the cursor moves: a crash in between finds the commit uncounted and projects it again.
    const catalogued = await this.project(table, config, at.location, head, last.version, cursor, tally);
    const symlinked = await this.symlink(table, config, at, last.version, cursor, tally);
    // Parts made smaller by a run that ran out of time grow back with each commit.
    const grown = cursor.partFiles === undefined ? undefined : cursor.partFiles * 2;
    const next: SinkCursor = {
      table,
      ...headPosition(head, table),
      deltaVersion: last.version,
      location: at.location,
      rows: cursor.rows + sum('rows'),
      rescued: cursor.rescued + sum('rescued'),
      ...(grown !== undefined && grown < at.limits.maxFiles ? { partFiles: grown } : {}),
      ...catalogued,
      ...symlinked,
    };
    if (!(await this.deps.cursors.advance(cursor, next))) {
      this.deps.log.warn('sink cursor moved under us; re-reading', { table, deltaVersion: last.version });
      return undefined;
    }
    // Counted once the cursor moved: what this call added to the table, as the cursor's totals count it.
    for (const c of head.uncounted) {
      tally.written.push(c.version);
      tally.added.rows += c.rows;
      tally.added.rescued += c.rescued;
      tally.added.dataFiles += c.files;
      tally.added.dataBytes += c.bytes;
    }
    for (let v = cursor.manifestVersion + 1; v <= next.manifestVersion; v++) tally.versions.push(v);
    head.uncounted = [];
    return next;
  }

  /**
   * Projects the head's schema into the table's Glue entry (docs/protocol.md, "Catalog projection"): the
   * cursor's `catalogued` becomes `deltaVersion` when the entry is in step, and stays where it was when the
   * catalog could not be written (logged), for the next run to repair.
   */
  private async project(
    table: string,
    config: BronzeConfig,
    location: string,
    head: TableHead,
    deltaVersion: number,
    cursor: SinkCursor,
    tally: Tally,
  ): Promise<Pick<SinkCursor, 'catalogued'>> {
    const schema = headSchema(head);
    if (!this.catalog || !config.catalog || !schema) return {};
    const inStep = await this.catalog.project({
      table,
      location,
      schema,
      deltaVersion: head.version,
      partitionBy: partitionColumnsOf(config),
    });
    if (inStep) return { catalogued: deltaVersion };
    tally.catalogFailed = true;
    return cursor.catalogued === undefined ? {} : { catalogued: cursor.catalogued };
  }

  /**
   * Writes the table's symlink manifests at the head (docs/bronze.md, "Symlink manifests"): the cursor's
   * `symlinked` becomes `deltaVersion` when they list it, and stays where it was when they could not be
   * written (logged), for the next run to repair.
   */
  private async symlink(
    table: string,
    config: BronzeConfig,
    at: { readonly delta: DeltaStore; readonly location: string; readonly head: TableHead },
    deltaVersion: number,
    cursor: SinkCursor,
    tally: Tally,
  ): Promise<Pick<SinkCursor, 'symlinked'>> {
    if (!config.symlinkManifest) return {};
    const manifestsAt = this.deps.manifestsAt;
    if (!manifestsAt)
      throw new InletError(`table ${table} has symlinkManifest but the sink was given no store for them`, {
        retryable: false,
      });
    const { bucket, prefix } = bronzeLocation(table, config, this.deps.manifestBucket);
    const inStep = await projectManifests({
      table,
      delta: at.delta,
      manifests: manifestsAt(bucket, prefix),
      location: at.location,
      version: at.head.version,
      since: cursor.symlinked,
      log: this.deps.log,
    });
    if (inStep) return { symlinked: deltaVersion };
    tally.manifestsFailed = true;
    return cursor.symlinked === undefined ? {} : { symlinked: cursor.symlinked };
  }

  /**
   * A table with nothing to write whose Glue entry or symlink manifests a run could not write: read its head
   * and project it, so a failure is repaired by the next run even when no commit follows. Costs nothing once
   * in step.
   */
  private async repairProjections(
    table: string,
    config: BronzeConfig,
    cursor: SinkCursor,
    tally: Tally,
  ): Promise<SinkCursor> {
    const catalogBehind = this.catalog && config.catalog && cursor.catalogued !== cursor.deltaVersion;
    const manifestsBehind = config.symlinkManifest && cursor.symlinked !== cursor.deltaVersion;
    if (cursor.deltaVersion < 0 || !(catalogBehind || manifestsBehind)) return cursor;
    const { bucket, prefix } = bronzeLocation(table, config, this.deps.manifestBucket);
    const delta = this.deps.deltaAt(bucket, prefix);
    const head = await loadHead(delta, table, cursor.deltaVersion);
    const location = `s3://${bucket}/${prefix}`;
    const projected = {
      ...(catalogBehind
        ? await this.project(table, config, location, head, cursor.deltaVersion, cursor, tally)
        : {}),
      ...(manifestsBehind
        ? await this.symlink(table, config, { delta, location, head }, cursor.deltaVersion, cursor, tally)
        : {}),
    };
    const next = { ...cursor, ...projected };
    if (next.catalogued === cursor.catalogued && next.symlinked === cursor.symlinked) return cursor;
    // Conditional like any advance: a run that moved the cursor meanwhile projected its own head.
    return (await this.deps.cursors.advance(cursor, next)) ? next : cursor;
  }

  /**
   * A part ran out of the invocation's time (its files are orphans): the next run's parts have half its
   * files, recorded on the cursor, so some part fits a run whatever the landing files' latency. A part of one
   * file that does not fit is an error an operator must see: more memory (CPU) or a longer timeout, or
   * smaller landing files.
   */
  private async shrinkParts(
    table: string,
    cursor: SinkCursor,
    manifestVersion: number,
    files: { readonly from: number; readonly to: number },
    tally: Tally,
  ): Promise<void> {
    const count = files.to - files.from;
    const where = { table, manifestVersion, files: `${files.from}-${files.to - 1}` };
    if (count <= 1) {
      tally.outOfTime = true;
      this.deps.log.error('bronze landing file too big for one sink invocation', where);
      return;
    }
    const partFiles = Math.floor(count / 2);
    this.deps.log.warn('bronze part out of time; next parts are smaller', { ...where, partFiles });
    // Conditional like any advance: if another run moved the cursor, its own parts decide.
    await this.deps.cursors.advance(cursor, { ...cursor, partFiles });
  }

  /** Which write of a landing key the table reads (docs/bronze.md, "Which write the sink reads"). */
  private identityOf(table: string): ReadIdentity {
    return this.deps.config.tables.find((t) => t.name === table)?.allowOverwrites ? 'write' : 'path';
  }

  /** Committed versions not wholly in the Delta table yet. */
  private async behind(table: string, cursor: SinkCursor): Promise<number | undefined> {
    if (!this.deps.heads) return undefined;
    // At least the manifest the run stopped at, even if the ledger's head has not moved past it yet (the
    // manifest is written before the commit transaction that moves the head).
    return Math.max(1, (await this.deps.heads.committedHead(table)) - cursor.manifestVersion);
  }

  /** After catching up, so "in the Delta table" is as recent as it gets. */
  private async clean(
    table: string,
    config: BronzeConfig,
    cursor: SinkCursor,
    deadline: number,
  ): Promise<CleanResult> {
    if (!config.cleanSource) return { versions: [], files: 0, left: 0, failed: false };
    const { cleaner } = this.deps;
    if (!cleaner)
      throw new InletError(`table ${table} has cleanSource but the sink has no cleaner`, {
        retryable: false,
      });
    const { bucket, prefix } = bronzeLocation(table, config, this.deps.manifestBucket);
    // What the sink read of a version is in its commits of it, wherever they are in the log.
    const commits = new VersionCommits(this.deps.deltaAt(bucket, prefix), cursor.deltaVersion);
    // Only versions wholly in the table: a version written in parts still needs the files of its rest.
    return cleanSource(
      { ...this.deps, cleaner, readsOf: (version) => commits.readsOf(version) },
      table,
      config.cleanSource,
      cursor.manifestVersion,
      deadline,
    );
  }
}

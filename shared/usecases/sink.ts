import { type BronzeConfig, bronzeLocation } from '../bronze/config.ts';
import type {
  DeltaStore,
  FileClaims,
  LandingCleaner,
  ManifestHeads,
  ReadIdentity,
  SinkCursor,
  SinkCursorStore,
  SourceObjects,
} from '../bronze/ports.ts';
import { checkpointDue, writeCheckpoint } from '../bronze/snapshot.ts';
import { writeVersion } from '../bronze/write-version.ts';
import type { PipelineConfig } from '../config.ts';
import { InletError } from '../errors.ts';
import type { Log } from '../log.ts';
import type { BatchStore } from '../storage/batch-store.ts';
import { type CleanResult, cleanSource } from './sink-clean.ts';
import { tailVersions } from './sink-tail.ts';

export interface SinkDeps {
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
  /** epoch ms */
  readonly now: () => number;
}

export interface SinkOutcome {
  readonly table: string;
  /** Delta versions this call committed (or found committed by an earlier attempt and recorded). */
  readonly written: readonly number[];
  /** False when the time budget ran out first: the caller asks for another run. */
  readonly caughtUp: boolean;
  /** Manifest versions whose landing files cleanSource deleted or moved in this call. */
  readonly cleaned?: readonly number[];
  readonly cursor: SinkCursor;
  /** What the versions in `written` added to the table. */
  readonly added: Added;
  /** Landing files cleanSource deleted or moved. */
  readonly cleanedFiles: number;
  /** Landing files cleanSource left in place for good (another write at the key than the table read). */
  readonly cleanLeft?: number;
  /** cleanSource stopped on an error this run (logged; retried by the next run). */
  readonly cleanFailed?: boolean;
  /** Committed manifest versions not in the Delta table when the call returned; undefined if unknown. */
  readonly behind: number | undefined;
}

export interface Added {
  readonly rows: number;
  readonly rescued: number;
  readonly dataFiles: number;
  readonly dataBytes: number;
  /** Landing files the versions committed in this call could not read (each logged with its reason). */
  readonly missingSources: number;
}

/**
 * The bronze sink (docs/bronze.md, "Exactly once"): the table's committed manifest versions, strictly in
 * order from its cursor, each written as one Delta commit, then the cursor advanced conditionally. A crash
 * anywhere replays the version: same data file names, the commit found (ours) instead of written twice.
 */
export class SinkTable {
  constructor(private readonly deps: SinkDeps) {}

  bronzeOf(table: string): BronzeConfig {
    const config = this.deps.config.tables.find((t) => t.name === table)?.bronze;
    if (!config) throw new InletError(`table ${table} has no bronze sink configured`, { retryable: false });
    return config;
  }

  /** Writes every committed version past the cursor, until caught up or `deadline` (epoch ms) passes. */
  async catchUp(table: string, deadline: number): Promise<SinkOutcome> {
    const written: number[] = [];
    const added = { rows: 0, rescued: 0, dataFiles: 0, dataBytes: 0, missingSources: 0 };
    const config = this.bronzeOf(table);
    for (;;) {
      const run = await this.writeFromCursor(table, config, deadline, written, added);
      if (run.kind === 'moved') continue;
      const { cursor } = run;
      if (run.kind === 'stopped') {
        const behind = await this.behind(table, cursor);
        return { table, written, caughtUp: false, cursor, added, cleanedFiles: 0, behind };
      }
      const clean = await this.clean(table, config, cursor, deadline);
      return {
        table,
        written,
        caughtUp: true,
        cursor,
        added,
        cleaned: clean.versions,
        cleanedFiles: clean.files,
        cleanLeft: clean.left,
        cleanFailed: clean.failed,
        // The tail ended at the first absent manifest: nothing committed was left behind.
        behind: 0,
      };
    }
  }

  /**
   * From the cursor on, appending to `written` and `added`; `moved` when another run advanced the cursor
   * first (an overlapping redelivery), so the caller re-reads it and goes on.
   */
  private async writeFromCursor(
    table: string,
    config: BronzeConfig,
    deadline: number,
    written: number[],
    added: { -readonly [K in keyof Added]: Added[K] },
  ): Promise<{ kind: 'caughtUp' | 'stopped'; cursor: SinkCursor } | { kind: 'moved' }> {
    const { deps } = this;
    const { bucket, prefix } = bronzeLocation(table, config, deps.manifestBucket);
    const delta = deps.deltaAt(bucket, prefix);
    const location = `s3://${bucket}/${prefix}`;
    let cursor = await deps.cursors.get(table);
    // Manifest version v is Delta version v-1: the cursor's next Delta version is manifest version +2.
    for await (const manifest of tailVersions(deps.store, table, cursor.deltaVersion + 2)) {
      if (deps.now() >= deadline) return { kind: 'stopped', cursor };
      const result = await writeVersion(
        { sources: deps.sources, delta },
        { table, location, config, manifest, schema: cursor.schema, identity: this.identityOf(table) },
      );
      // Before the cursor moves: a crash here replays the version, which finds its commit and writes this again.
      if (checkpointDue(result.deltaVersion, config.checkpointInterval)) {
        const checkpoint = await writeCheckpoint(delta, result.deltaVersion);
        deps.log.info('bronze checkpoint written', { table, ...checkpoint, location });
      }
      const next: SinkCursor = {
        table,
        deltaVersion: result.deltaVersion,
        schema: result.schema,
        rows: cursor.rows + result.rows,
        rescued: cursor.rescued + result.rescued,
      };
      if (!(await deps.cursors.advance(cursor, next))) {
        deps.log.warn('sink cursor moved under us; re-reading', { table, deltaVersion: result.deltaVersion });
        return { kind: 'moved' };
      }
      deps.log.info('bronze version written', {
        table,
        ...result,
        schema: undefined,
        missing: result.missing.length,
        location,
      });
      // Rows a version will never have (docs/bronze.md, "Which write the sink reads"): said per file.
      for (const { url, reason } of result.missing)
        deps.log.warn('bronze landing file missing', {
          table,
          manifestVersion: manifest.version,
          file: url,
          reason,
        });
      // Counted once the cursor moved: what this run added to the table, as the cursor's totals count it.
      written.push(result.deltaVersion);
      added.rows += result.rows;
      added.rescued += result.rescued;
      added.dataFiles += result.files;
      added.dataBytes += result.bytes;
      added.missingSources += result.missing.length;
      cursor = next;
    }
    return { kind: 'caughtUp', cursor };
  }

  /** Which write of a landing key the table reads (docs/bronze.md, "Which write the sink reads"). */
  private identityOf(table: string): ReadIdentity {
    return this.deps.config.tables.find((t) => t.name === table)?.allowOverwrites ? 'write' : 'path';
  }

  /** Versions committed but not yet in the Delta table (manifest version = Delta version + 1). */
  private async behind(table: string, cursor: SinkCursor): Promise<number | undefined> {
    if (!this.deps.heads) return undefined;
    // At least the manifest the run stopped at, even if the ledger's head has not moved past it yet (the
    // manifest is written before the commit transaction that moves the head).
    return Math.max(1, (await this.deps.heads.committedHead(table)) - (cursor.deltaVersion + 1));
  }

  /** After catching up, so "in the Delta table" is as recent as it gets (manifest version = Delta + 1). */
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
    const delta = this.deps.deltaAt(bucket, prefix);
    return cleanSource(
      // What the sink read of a version is in its commit: manifest version v is Delta version v-1.
      { ...this.deps, cleaner, commitOf: (version) => delta.getCommit(version - 1) },
      table,
      config.cleanSource,
      cursor.deltaVersion + 1,
      deadline,
    );
  }
}

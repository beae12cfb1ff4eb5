import { type BronzeConfig, bronzeLocation } from '../bronze/config.ts';
import type {
  DeltaStore,
  LandingCleaner,
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
import { cleanSource } from './sink-clean.ts';
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
  readonly manifestBucket: string;
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
    const { deps } = this;
    const config = this.bronzeOf(table);
    const { bucket, prefix } = bronzeLocation(table, config, deps.manifestBucket);
    const delta = deps.deltaAt(bucket, prefix);
    const location = `s3://${bucket}/${prefix}`;
    const written: number[] = [];
    let cursor = await deps.cursors.get(table);
    // Manifest version v is Delta version v-1: the cursor's next Delta version is manifest version +2.
    for await (const manifest of tailVersions(deps.store, table, cursor.deltaVersion + 2)) {
      if (deps.now() >= deadline) return { table, written, caughtUp: false, cursor };
      const result = await writeVersion(
        { sources: deps.sources, delta },
        { table, location, config, manifest, schema: cursor.schema },
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
        // Another sink run moved the cursor (overlapping redelivery): continue from where it is.
        deps.log.warn('sink cursor moved under us; re-reading', { table, deltaVersion: result.deltaVersion });
        return this.catchUp(table, deadline);
      }
      deps.log.info('bronze version written', { table, ...result, schema: undefined, location });
      written.push(result.deltaVersion);
      cursor = next;
    }
    return {
      table,
      written,
      caughtUp: true,
      cursor,
      cleaned: await this.clean(table, config, cursor, deadline),
    };
  }

  /** After catching up, so "in the Delta table" is as recent as it gets (manifest version = Delta + 1). */
  private async clean(table: string, config: BronzeConfig, cursor: SinkCursor, deadline: number) {
    if (!config.cleanSource) return [];
    const { cleaner } = this.deps;
    if (!cleaner)
      throw new InletError(`table ${table} has cleanSource but the sink has no cleaner`, {
        retryable: false,
      });
    return cleanSource(
      { ...this.deps, cleaner },
      table,
      config.cleanSource,
      cursor.deltaVersion + 1,
      deadline,
    );
  }
}

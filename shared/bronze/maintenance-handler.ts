import type { PipelineConfig } from '../config/pipeline-config.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Log } from '../kernel/log.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import { bronzeLocation } from './config.ts';
import { configuredRetentionMs } from './maintenance-config.ts';
import { type MaintenanceRecords, nextRecord } from './maintenance-record.ts';
import { optimizeTable } from './optimize.ts';
import type { DeltaStore, SymlinkManifests } from './ports.ts';
import { projectManifests } from './symlink-manifest.ts';
import type { TableFiles } from './table-files.ts';
import { vacuumTable } from './vacuum.ts';

/** Kept back from the Lambda timeout: a bin still rewriting then is abandoned (orphans), not killed mid-commit. */
const FINISH_MARGIN_MS = 60_000;

export interface MaintenanceDeps extends Clock {
  readonly config: PipelineConfig;
  readonly manifestBucket: string;
  readonly tableAt: (
    bucket: string,
    prefix: string,
  ) => { delta: DeltaStore; files: TableFiles; records: MaintenanceRecords; manifests?: SymlinkManifests };
  readonly newId: () => string;
  readonly log: Log;
  readonly metrics: MetricsSink;
}

export interface MaintenanceEvent {
  /** One table (a schedule per table names it); absent: every table whose maintenance is on. */
  readonly table?: string;
}

export type MaintenanceHandler = (
  event?: MaintenanceEvent,
  context?: { getRemainingTimeInMillis(): number },
) => Promise<{ readonly tables: number; readonly failed: readonly string[] }>;

/**
 * The scheduled optimize and vacuum of bronze tables (docs/bronze.md "Optimize and vacuum"): for each table,
 * optimize until the time budget, then vacuum. A table that fails is logged and counted and the others still
 * run; the invocation then fails, so Lambda's Errors metric (and the alarm on it) sees it.
 */
export function makeMaintenanceHandler(deps: MaintenanceDeps): MaintenanceHandler {
  return async (event, context) => {
    const started = deps.now();
    const finishBy =
      started + Math.max(1_000, (context?.getRemainingTimeInMillis() ?? 900_000) - FINISH_MARGIN_MS);
    const tables = deps.config.tables.filter(
      (t) => t.bronze?.maintenance && (event?.table === undefined || event.table === t.name),
    );
    const failed: string[] = [];
    const m = deps.metrics;
    try {
      for (const table of tables) {
        const bronze = table.bronze;
        const maintenance = bronze?.maintenance;
        if (!bronze || !maintenance) continue;
        const { bucket, prefix } = bronzeLocation(table.name, bronze, deps.manifestBucket);
        const { delta, files, records, manifests } = deps.tableAt(bucket, prefix);
        try {
          const optimized = await optimizeTable(
            { ...deps, delta, files },
            { table: table.name, targetFileBytes: maintenance.targetFileBytes, finishBy },
          );
          m.count(METRIC.optimizeFilesRemoved, optimized.filesRemoved);
          m.count(METRIC.optimizeFilesAdded, optimized.filesAdded);
          m.count(METRIC.optimizeBytes, optimized.bytesRead);
          // Optimize's commits change the live files: the manifests follow before vacuum deletes any file an
          // older manifest could still name (docs/bronze.md, "Symlink manifests").
          if (bronze.symlinkManifest) {
            if (!manifests) throw new Error('symlinkManifest is set but no manifest store was given');
            const listed = await projectManifests({
              table: table.name,
              delta,
              manifests,
              location: `s3://${bucket}/${prefix}`,
              version: Number.POSITIVE_INFINITY,
              since: undefined,
              log: deps.log,
            });
            if (!listed) throw new Error('symlink manifests not written: vacuum left for the next run');
          }
          const vacuumed = await vacuumTable(
            { now: deps.now, delta, files },
            { table: table.name, retentionMs: configuredRetentionMs(maintenance) },
          );
          m.count(METRIC.vacuumFilesDeleted, vacuumed.filesDeleted);
          m.count(METRIC.vacuumBytesDeleted, vacuumed.bytesDeleted);
          // Last: what `inlet table` shows. A run that fails before it leaves the previous run's record.
          await records.put(
            nextRecord(await records.get(), { table: table.name, now: deps.now(), optimized, vacuumed }),
          );
          deps.log.info('bronze table maintained', { table: table.name, optimized, vacuumed });
        } catch (error) {
          failed.push(table.name);
          m.count(METRIC.maintenanceErrors, 1);
          deps.log.error('bronze table maintenance failed; the next scheduled run tries again', {
            table: table.name,
            error: String(error),
          });
        }
      }
    } finally {
      m.flush();
    }
    if (failed.length > 0) throw new Error(`bronze maintenance failed for ${failed.join(', ')}`);
    return { tables: tables.length, failed };
  };
}

import * as z from '../kernel/zod.ts';
import type { OptimizeResult } from './optimize.ts';
import type { VacuumResult } from './vacuum.ts';

/**
 * Where a table's maintenance record lives, relative to its root: a hidden name (`_x`), which Delta's VACUUM,
 * delta-rs's and Inlet's own leave alone and no reader lists (readers read `_delta_log/` only).
 */
export const MAINTENANCE_RECORD_PATH = '_inlet/maintenance.json';

const count = z.int().check(z.gte(0));
const isoTime = z.iso.datetime();

/**
 * What the scheduled maintenance last did to a table (docs/bronze.md "Optimize and vacuum"), for
 * `inlet table`: one small object each run overwrites, read with one GET. The Delta log keeps the history
 * itself (each optimize commit's `commitInfo`, `operation: OPTIMIZE` with `operationMetrics`, as Spark and
 * delta-rs write it); this record saves a reader walking back through every commit since to find the last.
 * Databricks keeps its predictive optimization's runs apart from the table likewise (a system table).
 */
export const maintenanceRecordSchema = z.object({
  table: z.string(),
  /** When the last run ended. */
  ranAt: isoTime,
  /** The last run whose optimize committed (a run with no small files to pack leaves it as it was). */
  optimize: z.optional(
    z.object({
      at: isoTime,
      /** The Delta version of its last commit. */
      version: count,
      commits: count,
      /** Files rewritten, and the files written in their place. */
      filesRemoved: count,
      filesAdded: count,
      bytesRemoved: count,
      bytesAdded: count,
    }),
  ),
  /** The last run's vacuum. */
  vacuum: z.optional(
    z.object({
      at: isoTime,
      filesDeleted: count,
      bytesDeleted: count,
      /** The retention applied (the larger of the config's and the table's own). */
      retentionHours: z.number(),
    }),
  ),
});

export type MaintenanceRecord = z.infer<typeof maintenanceRecordSchema>;

/** A table's maintenance record (the S3 adapter: ./aws/s3-maintenance-record.ts). */
export interface MaintenanceRecords {
  /** The record, or undefined before the first run (or when it cannot be read as one). */
  get(): Promise<MaintenanceRecord | undefined>;
  put(record: MaintenanceRecord): Promise<void>;
}

/** The record after a run that ended at `now`: the run's vacuum, its optimize if it committed, else the last. */
export function nextRecord(
  previous: MaintenanceRecord | undefined,
  run: {
    readonly table: string;
    readonly now: number;
    readonly optimized: OptimizeResult;
    readonly vacuumed: VacuumResult;
  },
): MaintenanceRecord {
  const at = new Date(run.now).toISOString();
  const { optimized, vacuumed } = run;
  const optimize =
    optimized.commits > 0 && optimized.lastVersion !== undefined
      ? {
          at,
          version: optimized.lastVersion,
          commits: optimized.commits,
          filesRemoved: optimized.filesRemoved,
          filesAdded: optimized.filesAdded,
          bytesRemoved: optimized.bytesRead,
          bytesAdded: optimized.bytesWritten,
        }
      : previous?.optimize;
  return {
    table: run.table,
    ranAt: at,
    ...(optimize ? { optimize } : {}),
    vacuum: {
      at,
      filesDeleted: vacuumed.filesDeleted,
      bytesDeleted: vacuumed.bytesDeleted,
      retentionHours: vacuumed.retentionMs / 3_600_000,
    },
  };
}

/** A stored record's text, checked: anything else reads as no record (the next run writes a good one). */
export function parseMaintenanceRecord(text: string): MaintenanceRecord | undefined {
  try {
    const parsed = maintenanceRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

import * as z from '../kernel/zod.ts';

/**
 * delta-rs's default target (`delta.targetFileSize`, 104,857,600 bytes: its `OptimizeBuilder`), not
 * Databricks' 1 GB (`spark.databricks.delta.optimize.maxFileSize`): the file being built is held in the
 * function's memory (hyparquet-writer grows one buffer to about twice the file), so 100 MiB fits a 1 GB
 * function, and engines read 100 MB files as well as 1 GB ones (Databricks' own auto-compaction aims at 128 MB).
 */
export const DEFAULT_TARGET_FILE_BYTES = 104_857_600;

const HOUR_MS = 3_600_000;

/** Delta's `delta.deletedFileRetentionDuration` default, "interval 1 week" (PROTOCOL.md, Spark's DeltaConfigs). */
export const DEFAULT_RETENTION_MS = 7 * 24 * HOUR_MS;
/**
 * The least retention vacuum accepts: it must outlast the longest time between a writer uploading a data
 * file and committing it (a sink or optimize invocation, 15 minutes at most), or an uncommitted file
 * could be taken for an orphan (docs/protocol.md, V-I2). A day leaves room for clock skew and retries.
 */
export const MIN_RETENTION_MS = 24 * HOUR_MS;

/**
 * A bronze table's scheduled optimize and vacuum (docs/bronze.md, "Optimize and vacuum"): on by default
 * with these defaults; `maintenance: false` turns it off (config.ts).
 */
export const maintenanceSchema = z.strictObject({
  /** Hours between runs (the table's schedule). */
  everyHours: z._default(
    z
      .int('maintenance.everyHours must be a whole number of hours')
      .check(
        z.gte(1, 'maintenance.everyHours must be at least 1'),
        z.lte(168, 'maintenance.everyHours must be at most 168 (a week)'),
      ),
    24,
  ),
  /** Optimize rewrites files smaller than this into files of about this size. */
  targetFileBytes: z._default(
    z
      .int()
      .check(
        z.gte(1024 * 1024, 'maintenance.targetFileBytes must be at least 1 MiB'),
        z.lte(
          512 * 1024 * 1024,
          'maintenance.targetFileBytes must be at most 512 MiB (a file is built in memory)',
        ),
      ),
    DEFAULT_TARGET_FILE_BYTES,
  ),
  /**
   * Vacuum keeps what a version of the last this many hours names (Delta's `deletedFileRetentionDuration`,
   * 168 by default); at least 24, so a writer's uncommitted upload is never taken for an orphan.
   */
  retentionHours: z._default(
    z
      .int('maintenance.retentionHours must be a whole number of hours')
      .check(
        z.gte(
          MIN_RETENTION_MS / HOUR_MS,
          `maintenance.retentionHours must be at least ${MIN_RETENTION_MS / HOUR_MS} (time travel, and uploads not yet committed)`,
        ),
      ),
    DEFAULT_RETENTION_MS / HOUR_MS,
  ),
});

export type MaintenanceConfig = z.infer<typeof maintenanceSchema>;

/**
 * The retention of removed files a table's config asks for: its maintenance's, else (maintenance off: another
 * tool vacuums it) Delta's default week.
 */
export const configuredRetentionMs = (maintenance: MaintenanceConfig | false | undefined): number =>
  maintenance ? maintenance.retentionHours * HOUR_MS : DEFAULT_RETENTION_MS;

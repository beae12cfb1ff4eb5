import { DEFAULTS } from '../kernel/defaults.ts';
import { parseS3Prefix } from '../kernel/s3-url.ts';
import * as z from '../kernel/zod.ts';
import { nameProblem } from './delta-types.ts';
import { maintenanceSchema } from './maintenance-config.ts';

/**
 * Types a `schemaHints` entry may name: the types JSON and CSV inference produces. A table holds more (the
 * Delta type model, delta-types.ts); hints for those are not done yet
 * (docs/bronze.md, "Not done yet").
 */
export const HINT_TYPES = ['string', 'long', 'double', 'boolean'] as const;
export type HintType = (typeof HINT_TYPES)[number];

/** Columns the sink adds to every row; source data may not use these names (they go to `_rescued_data`). */
export const RESCUED_COLUMN = '_rescued_data';
export const SOURCE_FILE_COLUMN = '_source_file';
export const MANIFEST_VERSION_COLUMN = '_manifest_version';
export const SYSTEM_COLUMNS: readonly string[] = [
  RESCUED_COLUMN,
  SOURCE_FILE_COLUMN,
  MANIFEST_VERSION_COLUMN,
];

/**
 * Auto Loader's `cloudFiles.schemaEvolutionMode`, same names and meanings (docs/bronze.md):
 * `addNewColumns` evolves the schema in the same commit, `rescue` keeps new columns out of the schema and
 * puts their values in `_rescued_data`, `failOnNewColumns` stops the table at the version that has them,
 * `none` keeps them out and ignores their values.
 */
export const EVOLUTION_MODES = ['addNewColumns', 'rescue', 'failOnNewColumns', 'none'] as const;
export type EvolutionMode = (typeof EVOLUTION_MODES)[number];

const S3_URL = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/;

/**
 * Auto Loader's `cloudFiles.cleanSource` (docs/bronze.md, "cleanSource"): landing files of versions already
 * in the Delta table, committed at least `retentionDays` ago, are deleted or moved under `moveTo`.
 */
export const cleanSourceSchema = z
  .object({
    action: z.enum(['delete', 'move']),
    /** Days after the version's commit. */
    retentionDays: z._default(
      z
        .number()
        .check(
          z.gte(0, 'retentionDays must be 0 or more'),
          z.lte(3650, 'retentionDays must be at most 3650'),
        ),
      DEFAULTS.bronze.cleanSourceRetentionDays,
    ),
    /** `s3://bucket[/prefix]`; a moved file keeps its key under it. Only with `move`. */
    moveTo: z.optional(z.string().check(z.regex(S3_URL, 'moveTo must be s3://bucket[/prefix]'))),
  })
  .check(
    z.superRefine((value, ctx) => {
      if (value.action === 'move' && !value.moveTo)
        ctx.addIssue({
          code: 'custom',
          path: ['moveTo'],
          message: "action 'move' needs moveTo: s3://bucket/prefix",
        });
      if (value.action === 'delete' && value.moveTo)
        ctx.addIssue({ code: 'custom', path: ['moveTo'], message: "moveTo is only for action 'move'" });
    }),
  );

export type CleanSourceConfig = z.infer<typeof cleanSourceSchema>;

export const bronzeConfigSchema = z
  .object({
    /**
     * How the landing files are written: `json` and `jsonl` are JSON Lines (a file may also be one JSON
     * array), `csv` has a header line, `parquet` brings its own column types.
     */
    format: z.enum(['json', 'jsonl', 'csv', 'parquet']),
    /** Column -> type; overrides inference, e.g. `{ "zip": "string" }` so leading zeros survive. */
    schemaHints: z._default(z.record(z.string().check(z.minLength(1)), z.enum(HINT_TYPES)), {}),
    evolution: z._default(z.enum(EVOLUTION_MODES), 'addNewColumns'),
    /** `s3://bucket/prefix` of the Delta table. Default: `s3://<manifest bucket>/<table>/_bronze`. */
    location: z.optional(z.string().check(z.regex(S3_URL, 'location must be s3://bucket[/prefix]'))),
    /** A data file is closed once it reaches this size (checked per row group). */
    maxFileBytes: z._default(
      z
        .int()
        .check(
          z.gte(1024 * 1024, 'maxFileBytes must be at least 1 MiB'),
          z.lte(512 * 1024 * 1024, 'maxFileBytes must be at most 512 MiB (a file is built in memory)'),
        ),
      DEFAULTS.bronze.maxFileBytes,
    ),
    /** A Delta checkpoint every this many versions (docs/bronze.md, "Checkpoints"). */
    checkpointInterval: z._default(
      z
        .int('checkpointInterval must be a whole number of versions')
        .check(
          z.gte(1, 'checkpointInterval must be at least 1'),
          z.lte(10_000, 'checkpointInterval must be at most 10000 (a reader would replay that many commits)'),
        ),
      DEFAULTS.bronze.checkpointInterval,
    ),
    /** Off unless set: landing files stay where they are. */
    cleanSource: z.optional(cleanSourceSchema),
    /** Off unless set: the scheduled optimize and vacuum (maintenance-config.ts). */
    maintenance: z.optional(maintenanceSchema),
    /** Minutes between scheduled nudges of the table's sink (docs/bronze.md, "Trigger"); 0 turns them off. */
    nudgeEveryMinutes: z._default(
      z
        .int('nudgeEveryMinutes must be a whole number of minutes')
        .check(
          z.gte(0, 'nudgeEveryMinutes must be 0 (off) or more'),
          z.lte(1440, 'nudgeEveryMinutes must be at most 1440 (a day)'),
        ),
      DEFAULTS.bronze.nudgeEveryMinutes,
    ),
  })
  .check(
    z.superRefine((value, ctx) => {
      // Delta names are case-insensitive (PROTOCOL.md "Schema Serialization Format"): a hint differing from
      // a system column or another hint only by case would make the table unreadable.
      const seen = new Map<string, string>();
      for (const column of Object.keys(value.schemaHints)) {
        const lower = column.toLowerCase();
        const system = SYSTEM_COLUMNS.find((c) => c === lower);
        const problem = system
          ? `'${column}' is a column the sink adds${system === column ? '' : ` ('${system}'; names are case-insensitive)`}; it cannot be hinted`
          : seen.has(lower)
            ? `'${column}' and '${seen.get(lower)}' differ only by case: Delta column names are case-insensitive`
            : nameProblem(column);
        if (problem) ctx.addIssue({ code: 'custom', path: ['schemaHints', column], message: problem });
        seen.set(lower, column);
      }
    }),
  );

export type BronzeConfig = z.infer<typeof bronzeConfigSchema>;
export type BronzeConfigInput = z.input<typeof bronzeConfigSchema>;

/** Where a table's Delta table lives: its configured location or the default under the manifest bucket. */
export function bronzeLocation(
  table: string,
  config: Pick<BronzeConfig, 'location'>,
  manifestBucket: string,
): { bucket: string; prefix: string } {
  return parseS3Prefix(config.location ?? `s3://${manifestBucket}/${table}/_bronze`);
}

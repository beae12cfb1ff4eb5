import { DEFAULTS } from '../kernel/defaults.ts';
import { parseS3Prefix } from '../kernel/s3-url.ts';
import * as z from '../kernel/zod.ts';
import { nameProblem } from './delta-types.ts';
import { HintTypeError, parseHintType } from './hint-types.ts';
import { maintenanceSchema } from './maintenance-config.ts';

/**
 * What JSON objects and arrays become when inferred (docs/bronze.md, "JSON and CSV"): `typed` makes them
 * `struct` / `array` columns, as Spark's JSON inference does; `jsonText` keeps them as their JSON text in a
 * `string` column, for sources whose shapes vary. A hint names a column's type whatever the mode.
 */
export const NESTED_MODES = ['typed', 'jsonText'] as const;

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
 * The ingestion date: the UTC date of the manifest version's commit time, a `date` column the sink adds
 * only to a table partitioned by it (`partitionBy`), after the other system columns. A partition column
 * only: it lives in each file's `partitionValues`, never in the Parquet files.
 */
export const INGEST_DATE_COLUMN = '_ingest_date';

/**
 * Types a data column may have to be a partition column: their partition values are exact text
 * (PROTOCOL.md "Partition Value Serialization") every engine parses back to the same value. Floating-point
 * text differs between writers (`1e+21`, `1.0E21`), binary has no agreed escaping, nested types none at all.
 */
export const PARTITION_TYPES: readonly string[] = [
  'string',
  'long',
  'integer',
  'short',
  'byte',
  'boolean',
  'date',
];

/** Each partition column multiplies the directories and files a version is written as. */
export const MAX_PARTITION_COLUMNS = 3;

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
    /**
     * Column -> type in Spark DDL (hint-types.ts): overrides inference, e.g. `{ "zip": "string" }` so leading
     * zeros survive, `{ "amount": "decimal(12,2)", "at": "timestamp", "tags": "array<string>" }`.
     */
    schemaHints: z._default(
      z.record(
        z.string().check(z.minLength(1)),
        z.string().check(
          z.superRefine((text, ctx) => {
            const problem = hintTypeProblem(text);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          }),
        ),
      ),
      {},
    ),
    evolution: z._default(z.enum(EVOLUTION_MODES), 'addNewColumns'),
    /**
     * Widen a column's type when a value needs it, as Delta's type widening allows (docs/bronze.md, "Type
     * widening"): `integer` to `long`, `float` to `double`, a decimal to more digits. Off: such a value is
     * rescued. Off by default because a widened table carries the `typeWidening` reader feature, which
     * Spark with Delta Lake 4.0 reads and delta-rs 1.x refuses.
     */
    typeWidening: z._default(z.boolean(), false),
    nested: z._default(z.enum(NESTED_MODES), 'typed'),
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
    /**
     * Partition columns (docs/bronze.md, "Partitions"): data columns named in `schemaHints`, or
     * `_ingest_date`. Fixed by the table's first commit.
     */
    partitionBy: z.optional(z.array(z.string())),
    /** Off unless set: landing files stay where they are. */
    cleanSource: z.optional(cleanSourceSchema),
    /**
     * Register the table in the stack's AWS Glue database as a Delta table, kept in step with its schema
     * (docs/bronze.md, "Catalog"); false leaves it out of the catalog.
     */
    catalog: z._default(z.boolean(), true),
    /**
     * Keep `_symlink_format_manifest/` listing the table's live files after every commit, for readers of
     * manifests instead of the Delta log: Redshift Spectrum (docs/bronze.md, "Symlink manifests"). Off unless
     * set, as Delta's `delta.compatibility.symlinkFormatManifest.enabled`.
     */
    symlinkManifest: z._default(z.boolean(), false),
    /**
     * The scheduled optimize and vacuum (maintenance-config.ts; docs/bronze.md "Optimize and vacuum"): on by
     * default (daily, 7 days' retention), as Databricks' predictive optimization is for its managed tables;
     * `false` turns it off (a table another tool compacts and vacuums).
     */
    maintenance: z.prefault(z.union([z.literal(false), maintenanceSchema]), {}),
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
      for (const [column, text] of Object.entries(value.schemaHints)) {
        if (value.format === 'csv' && typeof parseHintType(text) !== 'string')
          ctx.addIssue({
            code: 'custom',
            path: ['schemaHints', column],
            message: `'${text}': a CSV field is text, it has no struct, array or map value to hold`,
          });
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
      for (const { path, message } of partitionProblems(value.partitionBy ?? [], value.schemaHints))
        ctx.addIssue({ code: 'custom', path, message });
    }),
  );

/**
 * What cannot work in `partitionBy`: a partition column's type and name are fixed by the table's first
 * commit (PROTOCOL.md "Change Metadata": `partitionColumns`; changing them rewrites every file), so each is
 * a hinted data column of a partitionable type, or the ingestion date.
 */
function partitionProblems(
  partitionBy: readonly string[],
  hints: Readonly<Record<string, unknown>>,
): Array<{ path: (string | number)[]; message: string }> {
  const problems: Array<{ path: (string | number)[]; message: string }> = [];
  if (partitionBy.length > MAX_PARTITION_COLUMNS)
    problems.push({
      path: ['partitionBy'],
      message: `at most ${MAX_PARTITION_COLUMNS} partition columns: each multiplies the directories and small files of every version`,
    });
  const seen = new Map<string, string>();
  partitionBy.forEach((column, i) => {
    const lower = column.toLowerCase();
    const twin = seen.get(lower);
    const problem =
      twin !== undefined
        ? `'${column}' and '${twin}' differ only by case: Delta column names are case-insensitive`
        : partitionColumnProblem(column, hints);
    if (problem) problems.push({ path: ['partitionBy', i], message: problem });
    seen.set(lower, column);
  });
  if (partitionBy.includes(INGEST_DATE_COLUMN) && Object.hasOwn(hints, INGEST_DATE_COLUMN))
    problems.push({
      path: ['schemaHints', INGEST_DATE_COLUMN],
      message: `'${INGEST_DATE_COLUMN}' is the ingestion date the sink adds to a table partitioned by it; it cannot be hinted`,
    });
  return problems;
}

function partitionColumnProblem(
  column: string,
  hints: Readonly<Record<string, unknown>>,
): string | undefined {
  if (column === INGEST_DATE_COLUMN) return undefined;
  const lower = column.toLowerCase();
  if (lower === INGEST_DATE_COLUMN)
    return `'${column}': the ingestion date column is '${INGEST_DATE_COLUMN}'`;
  if (lower === RESCUED_COLUMN)
    return `'${column}' holds what was rescued, as JSON text: it cannot be a partition column`;
  if (lower === SOURCE_FILE_COLUMN)
    return `'${column}' would make one partition per landing file: partition by '${INGEST_DATE_COLUMN}' or a data column`;
  if (lower === MANIFEST_VERSION_COLUMN)
    return `'${column}' would make one partition per version, of small files: partition by '${INGEST_DATE_COLUMN}' instead`;
  if (column.includes('.'))
    return `'${column}' names a nested field: partition columns are top-level columns (Delta's partitionColumns)`;
  const name = nameProblem(column);
  if (name) return `'${column}': ${name}`;
  if (!Object.hasOwn(hints, column))
    return `'${column}' has no schemaHints entry: a partition column's type is fixed by the first commit and never changes, so give it one (e.g. "${column}": "string")`;
  const type = hints[column];
  // The hint's type, whichever Spark DDL spelling names it (`bigint` is `long`); an invalid hint is reported
  // by the hints' own check.
  const read = typeof type === 'string' ? readHintType(type) : undefined;
  const parsed = read instanceof HintTypeError ? undefined : read;
  if (parsed !== undefined && !(typeof parsed === 'string' && PARTITION_TYPES.includes(parsed)))
    return `'${column}' is hinted ${String(type)}: a partition column is one of ${PARTITION_TYPES.join(', ')} (its value is the directory name, exact text every engine parses back)`;
  return undefined;
}

/** The type a hint names, or the HintTypeError saying why it names none. */
function readHintType(text: string): ReturnType<typeof parseHintType> | HintTypeError {
  try {
    return parseHintType(text);
  } catch (e) {
    if (e instanceof HintTypeError) return e;
    throw e;
  }
}

/** Why a hint's type names no type a column can hold, or undefined. */
function hintTypeProblem(text: string): string | undefined {
  const type = readHintType(text);
  return type instanceof HintTypeError ? type.message : undefined;
}

export type BronzeConfig = z.infer<typeof bronzeConfigSchema>;

/** The table's partition columns, in order; none when `partitionBy` is absent. */
export const partitionColumnsOf = (config: Pick<BronzeConfig, 'partitionBy'>): readonly string[] =>
  config.partitionBy ?? [];
export type BronzeConfigInput = z.input<typeof bronzeConfigSchema>;

/** Where a table's Delta table lives: its configured location or the default under the manifest bucket. */
export function bronzeLocation(
  table: string,
  config: Pick<BronzeConfig, 'location'>,
  manifestBucket: string,
): { bucket: string; prefix: string } {
  return parseS3Prefix(config.location ?? `s3://${manifestBucket}/${table}/_bronze`);
}

import { keyTimeSchema } from '../backfill/key-time.ts';
import { bronzeConfigSchema } from '../bronze/config.ts';
import { bronzeProblems, type KnownBuckets } from '../bronze/config-checks.ts';
import { DEFAULTS } from '../kernel/defaults.ts';
import { ConfigError } from '../kernel/errors.ts';
import { ENV } from '../kernel/names.ts';
import * as z from '../kernel/zod.ts';
import { issueLines } from '../kernel/zod.ts';

export const tableName = z
  .string()
  .check(
    z.regex(
      /^[a-z0-9][a-z0-9_-]{0,62}$/,
      'table names are 1-63 chars of a-z, 0-9, _ and -, starting with a letter or digit',
    ),
  );

export const tableConfigSchema = z.object({
  /** Manifest prefix and ledger namespace. */
  name: tableName,
  /** Key prefix in the landing bucket. */
  prefix: z._default(z.string(), ''),
  suffix: z.optional(z.string()),
  /** picomatch glob over the whole key, e.g. `orders/**\/*.json`. */
  glob: z.optional(z.string()),
  /** Only this bucket's objects (default: any bucket that sends events). */
  bucket: z.optional(z.string()),
  /** A rewritten object (new versionId / eTag) is a new file. Auto Loader's `allowOverwrites`. */
  allowOverwrites: z._default(z.boolean(), false),
  /**
   * Whether live S3 events feed the table. `false` makes a table that only backfills fill: the target of a
   * reprocess (docs/operations.md), which must not also take new files from the live stream.
   */
  live: z._default(z.boolean(), true),
  /** Also write each committed version to a Delta Lake table (docs/bronze.md). Off when absent. */
  bronze: z.optional(bronzeConfigSchema),
  /** Keys carry their write time, e.g. `orders/dt=YYYY-MM-DD/`: reconcile lists only its window's prefixes. */
  keyTime: z.optional(keyTimeSchema),
});

export const pipelineConfigSchema = z.object({
  tables: z.array(tableConfigSchema).check(z.minLength(1, 'at least one table is required')),
  ignoreGlobs: z._default(z.array(z.string()), [...DEFAULTS.ignoreGlobs]),
  /** How long a claim blocks other batchers; must exceed the batcher's timeout. */
  leaseSeconds: z._default(z.int().check(z.positive()), DEFAULTS.leaseSeconds),
  /** Parallel claim writes per invocation. */
  claimConcurrency: z._default(z.int().check(z.gte(1), z.lte(512)), DEFAULTS.claimConcurrency),
});

export type TableConfig = z.infer<typeof tableConfigSchema>;
export type PipelineConfig = z.infer<typeof pipelineConfigSchema>;
export type PipelineConfigInput = z.input<typeof pipelineConfigSchema>;

/**
 * What a table's schema cannot say about itself, as `field: message`: shared by the Lambda configuration and
 * the construct's props, so both refuse the same tables.
 */
export function tableProblems(table: TableConfig): string[] {
  // Reconcile lists the pattern's prefixes as keys of this table: one outside its prefix lists nothing of it.
  if (table.keyTime && !table.keyTime.pattern.startsWith(table.prefix))
    return [`keyTime.pattern: must start with the table's prefix '${table.prefix}'`];
  return [];
}

/**
 * Validates a configuration, reporting every problem at once. `buckets` names the landing and manifest
 * buckets where they are known (synth, for imported buckets): the cross-table bronze checks use them.
 */
export function parsePipelineConfig(input: unknown, buckets: KnownBuckets = {}): PipelineConfig {
  const result = pipelineConfigSchema.safeParse(input);
  const problems: string[] = result.success ? [] : issueLines(result.error);
  if (result.success) {
    const seen = new Set<string>();
    for (const table of result.data.tables) {
      if (seen.has(table.name)) problems.push(`tables: duplicate table name '${table.name}'`);
      seen.add(table.name);
      for (const problem of tableProblems(table)) problems.push(`tables: ${table.name}.${problem}`);
    }
    for (const problem of bronzeProblems(result.data.tables, buckets)) problems.push(`tables: ${problem}`);
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}

/** The configuration as the functions carry it, JSON: a ConfigError lists every problem, as for the object. */
export function parsePipelineConfigJson(raw: string): PipelineConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError([`is not JSON: ${(error as Error).message}`]);
  }
  return parsePipelineConfig(parsed);
}

/**
 * The configuration a function's environment carries (`ENV.config`): local mode reads it back from the
 * functions' environments in the template.
 */
export function configFromEnv(env: Readonly<Record<string, string | undefined>>): PipelineConfig {
  const raw = env[ENV.config];
  if (!raw) throw new ConfigError([`${ENV.config}: environment variable is not set`]);
  try {
    return parsePipelineConfigJson(raw);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(error.problems.map((p) => `${ENV.config}: ${p}`));
    throw error;
  }
}

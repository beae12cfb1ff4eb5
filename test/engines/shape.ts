/**
 * A table shape for `npm run test:engines`: landing files per manifest version, the table's bronze config
 * and the rows each file must give. test/engines/shapes.ts lists them; every shape is written by the real
 * sink on the emulator and read back by Spark + Delta Lake and by delta-rs (engines.test.ts).
 */
import { isLosslessNumber, LosslessNumber, parse } from 'lossless-json';
import type { BronzeConfigInput } from '../../shared/bronze/config.ts';
import type { SinkDeps } from '../../shared/bronze/sink.ts';
import type { WrittenTable } from './write-table.ts';

/**
 * A value as it must read back. Integer columns (`long`, `integer`, `short`, `byte`) take a number or a
 * bigint (past 2^53), `double` and `float` a number (NaN, the infinities and -0 included), `string` and
 * `boolean` their own. Types without a JS literal are given in the canonical form engines.py answers:
 * timestamp `2024-01-02T03:04:05.123456Z`, timestamp_ntz the same without `Z`, date `2024-01-02`, decimal
 * its digits with the scale (`12.30`), binary lowercase hex. A struct is an object (fields left out are
 * null), an array an array, a map an array of `[key, value]` pairs in file order; their values follow the
 * same rules by their own type (compare.ts `canonical`).
 */
export type Value =
  | string
  | number
  | bigint
  | boolean
  | null
  | readonly Value[]
  | { readonly [k: string]: Value };

/** Why a key was rescued: the exact text, or a pattern it must match. */
export type Reason = string | RegExp;

/** What `_rescued_data` must hold when it is not null and not given as its exact text. */
export class Rescued {
  private constructor(
    readonly fields: Readonly<Record<string, unknown>> | undefined,
    readonly reasons: Readonly<Record<string, Reason>>,
    readonly corrupt: string | undefined,
    readonly error: RegExp | undefined,
  ) {}

  /**
   * Values kept out of their columns: the JSON object `{...fields, _file_path, _reasons}` (docs/bronze.md,
   * "Columns"), parsed without rounding a number: a field given as a number must be spelled as JavaScript
   * prints it, as a `bigint` or a `literal` exactly so. `reasons` gives the reason of every field, each
   * compared with its entry in `_reasons`, which must name exactly these keys.
   */
  static values(
    fields: Readonly<Record<string, unknown>>,
    reasons: Readonly<Record<string, Reason>>,
  ): Rescued {
    const keys = Object.keys(fields).sort();
    if (show(keys) !== show(Object.keys(reasons).sort()))
      throw new Error(`rescued ${show(keys)} needs one reason for each, given ${show(Object.keys(reasons))}`);
    return new Rescued(fields, reasons, undefined, undefined);
  }

  /** A record that could not be parsed: its raw text and a reason (`error`, when given, must match it). */
  static record(raw: string, error?: RegExp): Rescued {
    return new Rescued(undefined, {}, raw, error);
  }

  /** Why `text` does not match for a row of `file`, or undefined when it does. */
  mismatch(text: unknown, file: string): string | undefined {
    if (typeof text !== 'string') return `expected rescued data, got ${JSON.stringify(text)}`;
    let parsed: Record<string, unknown>;
    try {
      parsed = parse(text) as Record<string, unknown>;
    } catch {
      return `not JSON: ${text}`;
    }
    if (!this.fields) {
      if (typeof parsed._error !== 'string' || parsed._error === '')
        return `a corrupt record without its reason: ${text}`;
      if (this.error && !this.error.test(parsed._error))
        return `reason ${JSON.stringify(parsed._error)} does not match ${this.error}`;
      const want = { _corrupt_record: this.corrupt, _error: parsed._error, _file_path: file };
      return sameJson(parsed, want) ? undefined : `expected ${JSON.stringify(want)}, got ${text}`;
    }
    const { _reasons: reasons, ...values } = parsed;
    const want = { ...this.fields, _file_path: file };
    if (!sameJson(values, want)) return `expected ${show(want)} and their _reasons, got ${text}`;
    return this.reasonsMismatch(reasons);
  }

  /** `_reasons` holds one reason per rescued key, each the one the shape gives. */
  private reasonsMismatch(reasons: unknown): string | undefined {
    if (typeof reasons !== 'object' || reasons === null || Array.isArray(reasons))
      return `no _reasons object: ${show(reasons)}`;
    const got = reasons as Record<string, unknown>;
    const keys = Object.keys(this.reasons);
    if (show(Object.keys(got).sort()) !== show([...keys].sort()))
      return `_reasons for ${show(Object.keys(got))}, rescued ${show(keys)}`;
    for (const key of keys) {
      const reason = got[key];
      const want = this.reasons[key] as Reason;
      const ok =
        typeof reason === 'string' && (typeof want === 'string' ? reason === want : want.test(reason));
      if (!ok)
        return `_reasons.${key} ${show(reason)}, expected ${want instanceof RegExp ? want : show(want)}`;
    }
    return undefined;
  }
}

const show = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : isLosslessNumber(v) ? `${v.value}` : v,
  );

/**
 * JSON parsed losslessly (`actual`, its numbers as their literal text) against what a shape gives: a number
 * literal must be spelled exactly as the shape's number prints (`String(0.1)`), bigint or `literal`, so a
 * rounded or respelled value never passes.
 */
function sameJson(actual: unknown, want: unknown): boolean {
  if (isLosslessNumber(actual)) {
    if (isLosslessNumber(want)) return actual.value === want.value;
    if (typeof want === 'bigint' || typeof want === 'number') return actual.value === String(want);
    return false;
  }
  if (actual === want) return true;
  if (typeof actual !== 'object' || typeof want !== 'object' || actual === null || want === null)
    return false;
  if (Array.isArray(actual) !== Array.isArray(want)) return false;
  const ka = Object.keys(actual);
  const kb = Object.keys(want);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(want, k) &&
        sameJson((actual as Record<string, unknown>)[k], (want as Record<string, unknown>)[k]),
    )
  );
}

/** A JSON number literal a rescued value must spell exactly (`literal('3.141592653589793238')`). */
export const literal = (text: string) => new LosslessNumber(text);

/**
 * Why a key was rescued, as the sink words each reason docs/bronze.md ("Columns", "Column names", "JSON and
 * CSV", "Parquet") gives.
 */
export const because = {
  misfit: (type: string) => `does not fit the column's type ${type}`,
  caseOf: (column: string) =>
    `differs only by case from column '${column}' (Delta names are case-insensitive)`,
  sinkColumn: (column: string) => `'${column}' is a column the sink adds (names are case-insensitive)`,
  badName: 'Delta cannot store a column name with any of " ,;{}()\\n\\t="',
  keptOut: 'new column, kept out by evolution mode rescue',
  beyondLong: 'an integer beyond the long range',
  beyondDouble: 'more digits (or range) than a double holds',
  subMicro: 'sub-microsecond digits: Delta timestamps hold microseconds',
  wideDecimal: (p: number, s: number) => `decimal(${p},${s}) has no Delta type (at most 38 digits)`,
  fieldsByCase: (a: string, b: string) =>
    `struct fields '${a}' and '${b}' differ only by case (Delta names are case-insensitive)`,
} as const;

export const rescued = Rescued.values;
export const corrupt = Rescued.record;

/** A row as written: data columns by name (left out: null) and `_rescued_data` (left out: null). */
export type ExpectedRow = Readonly<Record<string, Value | Rescued>>;

/** Data columns in table order, `[name, Delta type]`; the sink's own three columns follow them. */
export type Columns = readonly (readonly [string, string])[];

export const SYSTEM_FIELDS: Columns = [
  ['_rescued_data', 'string'],
  ['_source_file', 'string'],
  ['_manifest_version', 'long'],
];

export type LandingFile = string | Uint8Array | (() => Uint8Array);

/** One manifest version: the files that land for it, and what they must become in Delta version index. */
export interface VersionSpec {
  /** Landing files, by key under the table's prefix; a function makes its bytes when the file lands. */
  readonly files: Readonly<Record<string, LandingFile>>;
  /** The data columns after this version, when they differ from the version before (the first needs it). */
  readonly columns?: Columns;
  /** The rows each landing file gives, by its key, in any order; a file left out gives none. */
  readonly rows: Readonly<Record<string, readonly ExpectedRow[]>>;
  /** After the files land and the version is committed, before the sink writes it (delete a file...). */
  readonly beforeSink?: (table: WrittenTable) => Promise<void>;
}

export interface Shape {
  /** Unique; named in every failure. */
  readonly name: string;
  /** The table's `bronze` config; a function when it names the landing bucket (cleanSource). */
  readonly bronze: BronzeConfigInput | ((landingBucket: string) => BronzeConfigInput);
  /**
   * Manifest versions 1..n: Delta versions 0..n-1 when each is one commit and nobody else writes; parts and
   * other writers' commits (`beforeSink`) make more (the written table's `log` says which is which).
   */
  readonly versions: readonly VersionSpec[];
  /** The sink as this shape runs it (parts, checkpoint row groups); else the Lambda's own defaults. */
  readonly sink?: Pick<SinkDeps, 'parts' | 'checkpointRows'>;
  /** Filtered reads and how many files each engine must scan for them (data skipping by the files' stats). */
  readonly skipping?: readonly SkippingQuery[];
  /** Data files the table has at its last version, when not one a version (partitions make more). */
  readonly files?: number;
  /**
   * Fields of each data file's stats as delta-rs parses them (`get_add_actions(flatten=True)`, values as
   * text), by file in path order: only the fields given are compared.
   */
  readonly addStats?: readonly Readonly<Record<string, string | null>>[];
  /**
   * Reads an engine refuses by design, each asserted to fail with a matching error instead of compared:
   * `deltaRs` every Delta version from `fromVersion` on (a reader feature it lacks), `sparkStream` the
   * streams that cross a change Delta's streaming source stops at.
   */
  readonly refused?: {
    readonly deltaRs?: { readonly fromVersion: number; readonly error: RegExp };
    readonly sparkStream?: RegExp;
  };
  /** Asserts the table is the shape it claims (several files a version, files moved...); throws if not. */
  readonly written?: (table: WrittenTable) => Promise<void>;
}

/** A filtered read of the latest version: the files it must scan (of all of them) and the rows it returns. */
export interface SkippingQuery {
  /** SQL both Spark and delta-rs (DataFusion) parse. */
  readonly predicate: string;
  readonly files: number;
  readonly rows: number;
  /** Only these engines (delta-rs's file pruning takes no nested column). Default both. */
  readonly engines?: readonly ('spark' | 'delta-rs')[];
}

/** The rows and schema a reader must see at one Delta version: what the shape wrote up to it. */
export interface Expected {
  readonly columns: Columns;
  /** Columns after the system columns: `_ingest_date` of a table partitioned by it. */
  readonly generated: Columns;
  readonly rows: ReadonlyArray<{
    readonly file: string;
    readonly manifestVersion: number;
    readonly row: ExpectedRow;
  }>;
}

/** The columns after manifest version `index + 1` (a shape's versions by index). */
export function columnsAt(shape: Shape, index: number): Columns {
  for (let v = index; v >= 0; v--) {
    const columns = shape.versions[v]?.columns;
    if (columns) return columns;
  }
  throw new Error(`shape ${shape.name}: its first version must give its columns`);
}

/**
 * What one Delta version of a written table is: a commit of the sink's, covering landing files `files` (keys
 * under the table's prefix) of the shape's version `index` (all of them, or one part), or another writer's,
 * with what its history entry says.
 */
export type LogEntry =
  | { readonly kind: 'sink'; readonly index: number; readonly files: readonly string[] }
  | {
      readonly kind: 'other';
      readonly operation: string;
      readonly operationParameters: Readonly<Record<string, string>>;
      readonly engineInfo: string;
    };

/** The bronze config of a shape, its landing bucket named `landing` where the config needs one. */
export const bronzeOf = (shape: Shape): BronzeConfigInput =>
  typeof shape.bronze === 'function' ? shape.bronze('landing') : shape.bronze;

/**
 * Rows of Delta versions `from`..`to` as the shape wrote them (`log[d]` says what Delta version d is),
 * `sourceFile` naming each landing file; `ingestDate` gives the ingestion date (`YYYY-MM-DD`, the UTC day
 * of its manifest's commit) of the shape's version by index, for a table partitioned by it.
 */
export function expectedRows(
  shape: Shape,
  log: readonly LogEntry[],
  from: number,
  to: number,
  sourceFile: (key: string) => string,
  ingestDate: (index: number) => string = () => {
    throw new Error(`shape ${shape.name}: no ingestion dates`);
  },
): Expected {
  const ingested = bronzeOf(shape).partitionBy?.includes('_ingest_date') ?? false;
  const rows: Expected['rows'][number][] = [];
  let index = 0;
  for (let d = 0; d <= to; d++) {
    const entry = log[d];
    if (!entry) throw new Error(`shape ${shape.name} has no Delta version ${d}`);
    if (entry.kind !== 'sink') continue;
    index = entry.index;
    if (d < from) continue;
    const spec = shape.versions[entry.index];
    if (!spec) throw new Error(`shape ${shape.name} has no version ${entry.index}`);
    const known = new Set([...columnsAt(shape, entry.index).map(([name]) => name), '_rescued_data']);
    for (const key of entry.files) {
      for (const row of spec.rows[key] ?? []) {
        const stray = Object.keys(row).filter((c) => !known.has(c));
        if (stray.length > 0)
          throw new Error(
            `shape ${shape.name} version ${entry.index}: ${stray.join(', ')} not among its columns`,
          );
        rows.push({
          file: sourceFile(key),
          manifestVersion: entry.index + 1,
          row: ingested ? { ...row, _ingest_date: ingestDate(entry.index) } : row,
        });
      }
    }
  }
  const generated: Columns = ingested ? [['_ingest_date', 'date']] : [];
  return { columns: columnsAt(shape, index), generated, rows };
}

/** Rows a commit of the sink's added (its history's `numOutputRows`). */
export function rowsOf(shape: Shape, entry: Extract<LogEntry, { kind: 'sink' }>): number {
  const spec = shape.versions[entry.index];
  return entry.files.reduce((sum, key) => sum + (spec?.rows[key]?.length ?? 0), 0);
}

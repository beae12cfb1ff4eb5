import {
  type BronzeConfig,
  type EvolutionMode,
  INGEST_DATE_COLUMN,
  MANIFEST_VERSION_COLUMN,
  RESCUED_COLUMN,
  SOURCE_FILE_COLUMN,
  SYSTEM_COLUMNS,
} from './config.ts';
import { type BronzeType, typeText } from './delta-types.ts';
import { type Converter, MISFIT, typedConverter } from './fit.ts';
import { untypedConverter } from './fit-untyped.ts';
import { byLowerName, caseTwin, columnNameProblem, type TableSchema } from './schema.ts';
import { cellJson, Unstorable, untypedJson } from './values.ts';

/** One output row: data columns by name (cells, values.ts), plus the system columns. */
export type OutputRow = Record<string, unknown>;

/** Keys `_rescued_data` adds beside the rescued source keys: where the row came from and why each key. */
export const RESCUED_FILE_KEY = '_file_path';
export const RESCUED_REASONS_KEY = '_reasons';

/** PROTOCOL.md "Partition Value Serialization": "An empty string for any type translates to a null partition value". */
export const EMPTY_PARTITION_REASON =
  "an empty string partition value reads as null (Delta's partition value serialization)";

/** A row's declared column types (a Parquet file's schema); absent for untyped JSON and CSV values. */
export type DeclaredTypes = ReadonlyMap<string, BronzeType>;

/**
 * Fits records to a version's schema (pass 2 of a version). A value goes to its column when it fits
 * exactly (fit.ts); everything else goes to `_rescued_data` as JSON with its original key and exact value,
 * the source file (`_file_path`, Auto Loader's name) and the reason per key (`_reasons`): a value that does
 * not fit, a key that differs from a column only by case or that Delta cannot store, a column kept out by
 * the `rescue` mode, a value no Delta type holds. Nothing is dropped silently: the one exception is mode
 * `none`, which drops new columns by choice, as Auto Loader's `none` does.
 */
export class RecordFitter {
  private readonly columns: ReadonlyMap<string, BronzeType>;
  private readonly lower: ReadonlyMap<string, string>;
  private readonly untyped = new Map<string, Converter>();
  private readonly typed = new WeakMap<DeclaredTypes, Map<string, Converter>>();
  private readonly keyProblems = new Map<string, string | null>();
  private readonly csv: boolean;
  private readonly nullPrototype: boolean;
  /** Partition columns from the data: an empty string there would read back as null, so it is rescued. */
  private readonly partitions: ReadonlySet<string>;
  /** The ingestion date column of a table partitioned by it: a source key of that name is rescued. */
  private readonly ingestDate: boolean;

  constructor(
    private readonly schema: TableSchema,
    private readonly mode: EvolutionMode,
    format: BronzeConfig['format'],
    partitionBy: readonly string[] = [],
  ) {
    this.columns = new Map(schema.map((c) => [c.name, c.type]));
    this.partitions = new Set(partitionBy);
    this.ingestDate = partitionBy.includes(INGEST_DATE_COLUMN);
    const added = this.ingestDate ? [...SYSTEM_COLUMNS, INGEST_DATE_COLUMN] : SYSTEM_COLUMNS;
    this.lower = byLowerName([...schema, ...added.map((name) => ({ name }))]);
    this.csv = format === 'csv';
    this.nullPrototype = needsNullPrototype(schema);
    for (const c of schema) this.untyped.set(c.name, untypedConverter(c.type, this.csv));
  }

  /** Why a key that is not a column is rescued; null when it is merely new. */
  private keyProblem(name: string): string | null {
    let problem = this.keyProblems.get(name);
    if (problem === undefined) {
      const twin = caseTwin(name, this.lower);
      problem =
        columnNameProblem(name) ??
        (this.ingestDate && name.toLowerCase() === INGEST_DATE_COLUMN
          ? `'${INGEST_DATE_COLUMN}' is a column the sink adds (names are case-insensitive)`
          : undefined) ??
        (twin === undefined
          ? null
          : `differs only by case from column '${twin}' (Delta names are case-insensitive)`);
      this.keyProblems.set(name, problem);
    }
    return problem;
  }

  private converter(name: string, types: DeclaredTypes | undefined): Converter | undefined {
    if (!types) return this.untyped.get(name);
    let perFile = this.typed.get(types);
    if (!perFile) {
      perFile = new Map();
      this.typed.set(types, perFile);
    }
    let convert = perFile.get(name);
    if (!convert) {
      const from = types.get(name);
      const to = this.columns.get(name);
      if (to === undefined) return undefined;
      // A column the file does not declare (an unsupported type) only holds Unstorable values.
      convert =
        from === undefined
          ? (v) => (to === 'string' && v instanceof Unstorable ? v.text : MISFIT)
          : typedConverter(from, to);
      perFile.set(name, convert);
    }
    return convert;
  }

  fit(
    values: Readonly<Record<string, unknown>>,
    types: DeclaredTypes | undefined,
    sourceFile: string,
    manifestVersion: number,
  ): OutputRow {
    const row = emptyRow(this.schema, this.nullPrototype);
    const rescued: string[] = [];
    const reasons: string[] = [];
    const rescue = (name: string, value: unknown, reason: string) => {
      const from = types?.get(name);
      const json =
        value instanceof Unstorable ? value.json : from ? cellJson(value, from) : untypedJson(value);
      rescued.push(`${JSON.stringify(name)}:${json}`);
      reasons.push(
        `${JSON.stringify(name)}:${JSON.stringify(value instanceof Unstorable ? value.reason : reason)}`,
      );
    };
    for (const name of Object.keys(values)) {
      const value = values[name];
      // An empty CSV field is null (docs/bronze.md, "JSON and CSV"), and a null holds nothing to keep,
      // whether its key is a column or not.
      if (value === null || value === undefined || (this.csv && value === '')) continue;
      const convert = this.converter(name, types);
      if (convert) {
        const cell = convert(value);
        if (cell === '' && this.partitions.has(name)) rescue(name, value, EMPTY_PARTITION_REASON);
        else if (cell !== MISFIT) row[name] = cell;
        else
          rescue(
            name,
            value,
            `does not fit the column's type ${typeText(this.columns.get(name) as BronzeType)}`,
          );
        continue;
      }
      const problem = this.keyProblem(name);
      if (problem !== null) rescue(name, value, problem);
      else if (this.mode !== 'none' || value instanceof Unstorable)
        rescue(
          name,
          value,
          this.mode === 'rescue'
            ? 'new column, kept out by evolution mode rescue'
            : 'not a column of the table',
        );
    }
    row[RESCUED_COLUMN] = rescued.length > 0 ? rescuedJson(rescued, reasons, values, sourceFile) : null;
    row[SOURCE_FILE_COLUMN] = sourceFile;
    row[MANIFEST_VERSION_COLUMN] = BigInt(manifestVersion);
    return row;
  }
}

/**
 * A row with every data column null. A plain object, except when a column is named `__proto__`: assigning
 * that key on a plain object would set its prototype instead (a null-prototype object is slower to build,
 * so only then).
 */
const needsNullPrototype = (schema: TableSchema) => schema.some((c) => c.name === '__proto__');

function emptyRow(schema: TableSchema, nullPrototype = needsNullPrototype(schema)): OutputRow {
  const row: OutputRow = nullPrototype ? Object.create(null) : {};
  for (const column of schema) row[column.name] = null;
  return row;
}

/** The `_rescued_data` JSON; a source key named like one of ours keeps its value (ours is then left out). */
function rescuedJson(
  entries: string[],
  reasons: string[],
  values: Readonly<Record<string, unknown>>,
  sourceFile: string,
): string {
  const own = (key: string) => Object.hasOwn(values, key);
  const parts = [...entries];
  if (!own(RESCUED_FILE_KEY)) parts.push(`${JSON.stringify(RESCUED_FILE_KEY)}:${JSON.stringify(sourceFile)}`);
  if (!own(RESCUED_REASONS_KEY)) parts.push(`${JSON.stringify(RESCUED_REASONS_KEY)}:{${reasons.join(',')}}`);
  return `{${parts.join(',')}}`;
}

/** A record that could not be parsed: every data column null, the raw text rescued with the reason. */
export function corruptRow(
  raw: string,
  reason: string,
  schema: TableSchema,
  sourceFile: string,
  manifestVersion: number,
): OutputRow {
  const row = emptyRow(schema);
  row[RESCUED_COLUMN] = JSON.stringify({ _corrupt_record: raw, _error: reason, _file_path: sourceFile });
  row[SOURCE_FILE_COLUMN] = sourceFile;
  row[MANIFEST_VERSION_COLUMN] = BigInt(manifestVersion);
  return row;
}

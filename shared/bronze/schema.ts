import {
  type BronzeType,
  type EvolutionMode,
  MANIFEST_VERSION_COLUMN,
  RESCUED_COLUMN,
  SOURCE_FILE_COLUMN,
  SYSTEM_COLUMNS,
} from './config.ts';

/** One data column of a bronze table, in the order it was first seen. */
export interface Column {
  readonly name: string;
  readonly type: BronzeType;
}

/** The data columns; the system columns (config.ts) always follow them. */
export type TableSchema = readonly Column[];

/**
 * Column names a Delta table without column mapping accepts (PROTOCOL.md "Column Mapping": without it, names
 * may not contain ` ,;{}()\n\t=`). Others stay out of the schema and their values go to `_rescued_data`.
 */
export function isStorableColumn(name: string): boolean {
  return name !== '' && !/[ ,;{}()\n\t=]/.test(name) && !SYSTEM_COLUMNS.includes(name);
}

/** The type a raw value would have on its own; undefined for null / missing. */
export function typeOfValue(value: unknown, fromCsv: boolean): BronzeType | undefined {
  if (value === null || value === undefined) return undefined;
  if (fromCsv) {
    const text = String(value);
    if (text === '') return undefined;
    if (/^-?\d{1,18}$/.test(text)) return 'long';
    if (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return 'double';
    if (text === 'true' || text === 'false') return 'boolean';
    return 'string';
  }
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'long' : 'double';
  if (typeof value === 'bigint') return 'long';
  return 'string';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** JSON text of any value read from a file, bigint included (Parquet INT64), as a number when exact. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v,
  );
}

/** The narrowest type that holds both: long and double widen to double, anything else to string. */
export function widen(a: BronzeType | undefined, b: BronzeType | undefined): BronzeType | undefined {
  if (a === undefined) return b;
  if (b === undefined || a === b) return a;
  if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long')) return 'double';
  return 'string';
}

export type Coerced = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

/**
 * A raw value as a column of `type` would store it (bigint for long), or `ok: false` when it does not fit:
 * the caller rescues it. Objects and arrays fit a string column as their JSON.
 */
export function coerce(value: unknown, type: BronzeType, fromCsv: boolean): Coerced {
  if (value === null || value === undefined || (fromCsv && value === '')) return { ok: true, value: null };
  switch (type) {
    case 'string':
      return { ok: true, value: typeof value === 'string' ? value : jsonText(value) };
    case 'long': {
      if (typeof value === 'number' && Number.isSafeInteger(value)) return { ok: true, value: BigInt(value) };
      if (typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX) return { ok: true, value };
      if (fromCsv && /^-?\d{1,18}$/.test(String(value))) return { ok: true, value: BigInt(String(value)) };
      return { ok: false };
    }
    case 'double': {
      if (typeof value === 'number') return { ok: true, value };
      if (typeof value === 'bigint') return { ok: true, value: Number(value) };
      if (fromCsv && typeOfValue(value, true) !== 'string' && typeOfValue(value, true) !== 'boolean')
        return { ok: true, value: Number(value) };
      return { ok: false };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { ok: true, value };
      if (fromCsv && (value === 'true' || value === 'false')) return { ok: true, value: value === 'true' };
      return { ok: false };
    }
  }
}

/** Column types observed over a version's records, in first-seen order (pass 1 of a version). */
export class SchemaObserver {
  private readonly types = new Map<string, BronzeType | undefined>();

  constructor(private readonly fromCsv: boolean) {}

  /** Columns a file declares (Parquet): their types count even where every value is null. */
  declare(columns: readonly Column[]): void {
    for (const { name, type } of columns) {
      if (!isStorableColumn(name)) continue;
      this.types.set(name, widen(this.types.get(name), type));
    }
  }

  observe(values: Readonly<Record<string, unknown>>): void {
    for (const [name, value] of Object.entries(values)) {
      if (!isStorableColumn(name)) continue;
      this.types.set(name, widen(this.types.get(name), typeOfValue(value, this.fromCsv)));
    }
  }

  /** Columns seen; a column seen only as null is a string (it can hold anything later). */
  columns(): Column[] {
    return [...this.types].map(([name, type]) => ({ name, type: type ?? 'string' }));
  }
}

export type SchemaDecision =
  | { readonly kind: 'ok'; readonly schema: TableSchema; readonly changed: boolean }
  | { readonly kind: 'fail'; readonly newColumns: readonly string[] };

/**
 * The schema a version is written with. The first version takes every observed column (hints win);
 * later ones keep existing columns and types, and treat new columns per the evolution mode.
 */
export function decideSchema(
  current: TableSchema | undefined,
  observed: readonly Column[],
  hints: Readonly<Record<string, BronzeType>>,
  mode: EvolutionMode,
): SchemaDecision {
  const hinted = (c: Column): Column => ({ name: c.name, type: hints[c.name] ?? c.type });
  if (!current) {
    const schema = observed.map(hinted);
    // Hinted columns exist from the start even before data has them, so their type is fixed up front.
    for (const [name, type] of Object.entries(hints))
      if (!schema.some((c) => c.name === name)) schema.push({ name, type });
    return { kind: 'ok', schema, changed: true };
  }
  const known = new Set(current.map((c) => c.name));
  const added = observed.filter((c) => !known.has(c.name));
  if (added.length === 0 || mode === 'rescue' || mode === 'none')
    return { kind: 'ok', schema: current, changed: false };
  if (mode === 'failOnNewColumns') return { kind: 'fail', newColumns: added.map((c) => c.name) };
  return { kind: 'ok', schema: [...current, ...added.map(hinted)], changed: true };
}

/** One output row: data columns by name, plus the system columns. */
export type OutputRow = Record<string, unknown>;

/**
 * Fits a record to the schema: values that do not fit their column, columns outside the schema (unless
 * the mode is `none`) go to `_rescued_data` as JSON with `_file_path`, so nothing is dropped silently.
 */
export function fitRecord(
  values: Readonly<Record<string, unknown>>,
  schema: TableSchema,
  mode: EvolutionMode,
  fromCsv: boolean,
  sourceFile: string,
  manifestVersion: number,
): OutputRow {
  const row: OutputRow = {};
  const rescued: Record<string, unknown> = {};
  const byName = new Map(schema.map((c) => [c.name, c.type]));
  for (const [name, value] of Object.entries(values)) {
    const type = byName.get(name);
    if (type === undefined) {
      if (mode !== 'none' || !isStorableColumn(name)) rescued[name] = value;
      continue;
    }
    const fitted = coerce(value, type, fromCsv);
    if (fitted.ok) row[name] = fitted.value;
    else rescued[name] = value;
  }
  for (const column of schema) if (!(column.name in row)) row[column.name] = null;
  row[RESCUED_COLUMN] =
    Object.keys(rescued).length > 0 ? jsonText({ ...rescued, _file_path: sourceFile }) : null;
  row[SOURCE_FILE_COLUMN] = sourceFile;
  row[MANIFEST_VERSION_COLUMN] = BigInt(manifestVersion);
  return row;
}

/** A record that could not be parsed: every data column null, the raw text rescued with the reason. */
export function corruptRow(
  raw: string,
  reason: string,
  schema: TableSchema,
  sourceFile: string,
  manifestVersion: number,
): OutputRow {
  const row: OutputRow = {};
  for (const column of schema) row[column.name] = null;
  row[RESCUED_COLUMN] = JSON.stringify({ _corrupt_record: raw, _error: reason, _file_path: sourceFile });
  row[SOURCE_FILE_COLUMN] = sourceFile;
  row[MANIFEST_VERSION_COLUMN] = BigInt(manifestVersion);
  return row;
}

/** Every column a data file has, data then system, with its type. */
export function allColumns(schema: TableSchema): Column[] {
  return [
    ...schema,
    { name: RESCUED_COLUMN, type: 'string' },
    { name: SOURCE_FILE_COLUMN, type: 'string' },
    { name: MANIFEST_VERSION_COLUMN, type: 'long' },
  ];
}

/** The Delta `schemaString` (PROTOCOL.md "Schema Serialization Format"): a struct of nullable primitives. */
export function toDeltaSchemaString(schema: TableSchema): string {
  return JSON.stringify({
    type: 'struct',
    fields: allColumns(schema).map((c) => ({ name: c.name, type: c.type, nullable: true, metadata: {} })),
  });
}

/** The data columns of a `schemaString` this sink wrote. */
export function fromDeltaSchemaString(schemaString: string): TableSchema {
  const parsed = JSON.parse(schemaString) as { fields: { name: string; type: BronzeType }[] };
  return parsed.fields
    .filter((f) => !SYSTEM_COLUMNS.includes(f.name))
    .map((f) => ({ name: f.name, type: f.type }));
}

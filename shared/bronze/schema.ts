import { InletError } from '../kernel/errors.ts';
import {
  type EvolutionMode,
  INGEST_DATE_COLUMN,
  MANIFEST_VERSION_COLUMN,
  RESCUED_COLUMN,
  SOURCE_FILE_COLUMN,
  SYSTEM_COLUMNS,
} from './config.ts';
import { type BronzeType, nameProblem, parseBronzeType, type StructField } from './delta-types.ts';
import { TYPE_CHANGES_KEY, type TypeChange, typeChangesSchema } from './type-widening.ts';

/** One data column of a bronze table, in the order it was first seen. */
export interface Column {
  readonly name: string;
  readonly type: BronzeType;
  /** Its type changes, oldest first (PROTOCOL.md "Type Change Metadata"); kept by every later schema. */
  readonly typeChanges?: readonly TypeChange[];
}

/** The data columns; the system columns (config.ts) always follow them. */
export type TableSchema = readonly Column[];

const SYSTEM_LOWER = new Map(SYSTEM_COLUMNS.map((c) => [c.toLowerCase(), c]));

/**
 * Why a source key can never be a column, or undefined: a name Delta cannot store without column mapping,
 * or one that is a system column's regardless of case (`_Source_File` beside `_source_file` would make the
 * table unreadable: PROTOCOL.md "Schema Serialization Format", "All column names must be unique regardless
 * of casing"). Its values go to `_rescued_data`.
 */
export function columnNameProblem(name: string): string | undefined {
  const system = SYSTEM_LOWER.get(name.toLowerCase());
  if (system) return `'${system}' is a column the sink adds (names are case-insensitive)`;
  return nameProblem(name);
}

/** Column names are case-insensitive in Delta: the column a key would collide with, if it differs by case. */
export function caseTwin(name: string, columnsByLower: ReadonlyMap<string, string>): string | undefined {
  const twin = columnsByLower.get(name.toLowerCase());
  return twin !== undefined && twin !== name ? twin : undefined;
}

export const byLowerName = (columns: readonly { name: string }[]) =>
  new Map(columns.map((c) => [c.name.toLowerCase(), c.name]));

export type SchemaDecision =
  | { readonly kind: 'ok'; readonly schema: TableSchema; readonly changed: boolean }
  | { readonly kind: 'fail'; readonly newColumns: readonly string[] };

/**
 * The schema a version is written with. The first version takes every observed column (hints win, and a
 * hinted name claims its spelling: an observed key differing from it only by case is rescued); later ones
 * keep existing columns and types, and treat new columns per the evolution mode. A name that differs from
 * an existing column only by case is never new: it is rescued.
 */
export function decideSchema(
  current: TableSchema | undefined,
  observed: readonly Column[],
  hints: Readonly<Record<string, BronzeType>>,
  mode: EvolutionMode,
): SchemaDecision {
  // Own keys only: a column named `__proto__` or `constructor` is not a hint.
  const hinted = (c: Column): Column => ({
    name: c.name,
    type: Object.hasOwn(hints, c.name) ? (hints[c.name] as BronzeType) : c.type,
  });
  if (!current) {
    const hintNames = byLowerName(Object.keys(hints).map((name) => ({ name })));
    const schema = observed.filter((c) => caseTwin(c.name, hintNames) === undefined).map(hinted);
    // Hinted columns exist from the start even before data has them, so their type is fixed up front.
    for (const [name, type] of Object.entries(hints))
      if (!schema.some((c) => c.name === name)) schema.push({ name, type });
    return { kind: 'ok', schema, changed: true };
  }
  const known = byLowerName(current);
  const added = observed.filter((c) => !known.has(c.name.toLowerCase()));
  // New fields inside existing struct columns are new columns too (a hinted column's type is the hint's).
  const seen = new Map(observed.map((c) => [c.name, c.type]));
  const newFields: string[] = [];
  const evolved = current.map((c) => {
    const type = seen.get(c.name);
    if (type === undefined || Object.hasOwn(hints, c.name)) return c;
    return { ...c, type: withNewFields(c.type, type, c.name, newFields) };
  });
  if ((added.length === 0 && newFields.length === 0) || mode === 'rescue' || mode === 'none')
    return { kind: 'ok', schema: current, changed: false };
  if (mode === 'failOnNewColumns')
    return { kind: 'fail', newColumns: [...added.map((c) => c.name), ...newFields] };
  return { kind: 'ok', schema: [...evolved, ...added.map(hinted)], changed: true };
}

/**
 * `current` with the struct fields `observed` has and it lacks, at any depth (in arrays' elements and maps'
 * values too), their paths pushed to `added`. Existing fields keep their types (a value that does not fit
 * is rescued); a field differing from an existing one only by case, or with a name Delta cannot store, is
 * never added (its values are rescued whole).
 */
function withNewFields(current: BronzeType, observed: BronzeType, path: string, added: string[]): BronzeType {
  if (typeof current === 'string' || typeof observed === 'string') return current;
  if (current.type === 'array' && observed.type === 'array') {
    const element = withNewFields(current.elementType, observed.elementType, `${path}.element`, added);
    return element === current.elementType ? current : { ...current, elementType: element };
  }
  if (current.type === 'map' && observed.type === 'map') {
    const value = withNewFields(current.valueType, observed.valueType, `${path}.value`, added);
    return value === current.valueType ? current : { ...current, valueType: value };
  }
  if (current.type !== 'struct' || observed.type !== 'struct') return current;
  const lower = byLowerName(current.fields);
  let changed = false;
  const fields: StructField[] = current.fields.map((f) => {
    const twin = observed.fields.find((o) => o.name === f.name);
    if (!twin) return f;
    const type = withNewFields(f.type, twin.type, `${path}.${f.name}`, added);
    if (type === f.type) return f;
    changed = true;
    return { ...f, type };
  });
  for (const field of observed.fields) {
    if (lower.has(field.name.toLowerCase()) || nameProblem(field.name) !== undefined) continue;
    lower.set(field.name.toLowerCase(), field.name);
    added.push(`${path}.${field.name}`);
    fields.push({ name: field.name, type: field.type, nullable: true, metadata: {} });
    changed = true;
  }
  return changed ? { type: 'struct', fields } : current;
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

/** Every column of a table partitioned by `partitionBy`: data, system, then the ingestion date if it has one. */
export function tableColumns(schema: TableSchema, partitionBy: readonly string[]): Column[] {
  const columns = allColumns(schema);
  if (partitionBy.includes(INGEST_DATE_COLUMN)) columns.push({ name: INGEST_DATE_COLUMN, type: 'date' });
  return columns;
}

/**
 * The columns of a data file: every column but the partition columns, whose values are in the log's
 * `partitionValues` (as Spark writes them; and Delta's statistics leave them out: StatisticsCollection,
 * "The partition columns' definitions are not included in this schema").
 */
export const fileColumns = (schema: TableSchema, partitionBy: readonly string[]): Column[] =>
  allColumns(schema).filter((c) => !partitionBy.includes(c.name));

/**
 * The Delta `schemaString` (PROTOCOL.md "Schema Serialization Format"): a struct of nullable fields whose
 * types are the model's JSON (delta-types.ts), nested types included, and a widened column's type changes
 * in its metadata (PROTOCOL.md "Type Change Metadata").
 */
export function toDeltaSchemaString(schema: TableSchema, partitionBy: readonly string[] = []): string {
  return JSON.stringify({
    type: 'struct',
    fields: tableColumns(schema, partitionBy).map((c) => ({
      name: c.name,
      type: c.type,
      nullable: true,
      metadata: c.typeChanges?.length ? { [TYPE_CHANGES_KEY]: c.typeChanges } : {},
    })),
  });
}

/** The data columns of a `schemaString` this sink wrote, every type validated, type changes kept. */
export function fromDeltaSchemaString(
  schemaString: string,
  partitionColumns: readonly string[] = [],
): TableSchema {
  const parsed = JSON.parse(schemaString) as {
    fields: { name: string; type: unknown; metadata?: Record<string, unknown> }[];
  };
  const added = (name: string) =>
    SYSTEM_COLUMNS.includes(name) || (name === INGEST_DATE_COLUMN && partitionColumns.includes(name));
  return parsed.fields
    .filter((f) => !added(f.name))
    .map((f) => {
      const column: Column = { name: f.name, type: parseBronzeType(f.type, f.name) };
      const changes = f.metadata?.[TYPE_CHANGES_KEY];
      if (changes === undefined) return column;
      const read = typeChangesSchema.safeParse(changes);
      if (!read.success)
        throw new InletError(`Delta schema: ${f.name}: ${TYPE_CHANGES_KEY} is not a list of type changes`, {
          retryable: false,
        });
      return { ...column, typeChanges: read.data };
    });
}

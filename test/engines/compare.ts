/**
 * Exact comparison of what an engine read with what the shape wrote, and of one engine with the other.
 * Each difference is one line naming the shape, the engine, the read (version, stream run...), the landing
 * file and manifest version of the row, and the column and both values, so a failure says where to look.
 */
import type { EngineRow, SchemaField } from './engine-server.ts';
import {
  type Columns,
  type Expected,
  type ExpectedRow,
  Rescued,
  SYSTEM_FIELDS,
  type Value,
} from './shape.ts';

const MAX_LINES = 20;
const INTEGER_TYPES = new Set(['long', 'integer', 'short', 'byte']);

/** A Delta type as engines.py prints it (`long`, `decimal(10,2)`, `struct<a:long>`, `map<k,v>`), parsed. */
type TypeTree =
  | string
  | { readonly struct: readonly (readonly [string, TypeTree])[] }
  | { readonly array: TypeTree }
  | { readonly map: readonly [TypeTree, TypeTree] };

/** `text` split at the commas outside `<...>` and `(...)`. */
function topLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '<' || c === '(') depth++;
    else if (c === '>' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

function parseType(text: string): TypeTree {
  const nested = /^(struct|array|map)<(.*)>$/s.exec(text);
  if (!nested) return text;
  const [, kind, inner = ''] = nested;
  if (kind === 'array') return { array: parseType(inner) };
  const parts = topLevel(inner);
  if (kind === 'map') {
    const [key, value] = parts;
    if (parts.length !== 2 || key === undefined || value === undefined) throw new Error(`bad type ${text}`);
    return { map: [parseType(key), parseType(value)] };
  }
  return {
    struct: parts.map((field) => {
      const colon = field.indexOf(':');
      return [field.slice(0, colon), parseType(field.slice(colon + 1))] as const;
    }),
  };
}

/** An expected value in the form engines.py answers for `type` (see `Value` in shape.ts). */
export function canonical(value: Value, type: string, where: string): unknown {
  return canonicalOf(value, parseType(type), where);
}

function canonicalOf(value: Value, type: TypeTree, where: string): unknown {
  if (value === null) return null;
  const fail = (why: string): never => {
    throw new Error(`${where}: ${show(value)} ${why}`);
  };
  if (typeof type !== 'string') {
    if ('array' in type) {
      if (!Array.isArray(value)) return fail('is not an array');
      return (value as readonly Value[]).map((v, i) => canonicalOf(v, type.array, `${where}[${i}]`));
    }
    if ('map' in type) {
      if (!Array.isArray(value)) return fail('is not an array of [key, value] pairs');
      const [keyType, valueType] = type.map;
      return (value as readonly Value[]).map((pair, i) => {
        if (!Array.isArray(pair) || pair.length !== 2) return fail(`has entry ${i} that is not a pair`);
        const [k, v] = pair as unknown as readonly [Value, Value];
        return [
          canonicalOf(k, keyType, `${where} key ${i}`),
          canonicalOf(v, valueType, `${where} value ${i}`),
        ];
      });
    }
    if (typeof value !== 'object' || Array.isArray(value) || typeof value === 'bigint')
      return fail('is not a struct');
    const fields = value as { readonly [k: string]: Value };
    const stray = Object.keys(fields).filter((k) => !type.struct.some(([name]) => name === k));
    if (stray.length > 0) fail(`has fields ${stray.join(', ')} the struct does not`);
    return Object.fromEntries(
      type.struct.map(([name, t]) => [name, canonicalOf(fields[name] ?? null, t, `${where}.${name}`)]),
    );
  }
  if (INTEGER_TYPES.has(type)) {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return fail(`is not an exact integer for a ${type} column (use a bigint)`);
  }
  if (type === 'double' || type === 'float') {
    if (typeof value !== 'number') return fail(`is not a number for ${type}`);
    // Python's repr of the values JSON cannot carry (engines.py): -0, NaN and the infinities.
    if (Object.is(value, -0)) return '-0.0';
    return Number.isFinite(value) ? value : Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  }
  if (type === 'boolean') return typeof value === 'boolean' ? value : fail('is not a boolean');
  // string, binary (hex), date, timestamp, timestamp_ntz, decimal(p,s): their canonical text.
  return typeof value === 'string' ? value : fail(`is not the canonical text of a ${type}`);
}

const show = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? 'undefined';

export function diffSchema(
  label: string,
  columns: Columns,
  actual: readonly SchemaField[],
  generated: Columns = [],
): string[] {
  const want = [...columns, ...SYSTEM_FIELDS, ...generated].map(([name, type]) => `${name} ${type}`);
  const got = actual.map(([name, type, nullable]) => `${name} ${type}${nullable ? '' : ' NOT NULL'}`);
  return show(want) === show(got) ? [] : [`${label}: schema ${show(got)}, expected ${show(want)}`];
}

interface Want {
  readonly file: string;
  readonly manifestVersion: number;
  /** Data columns, canonical, in table order. */
  readonly data: readonly unknown[];
  readonly rescued: ExpectedRow[string] | undefined;
}

const groupOf = (manifestVersion: unknown, file: unknown) => `${String(manifestVersion)}|${String(file)}`;

function rescuedMismatch(want: Want, got: unknown): string | undefined {
  const rescued = want.rescued ?? null;
  if (rescued instanceof Rescued) return rescued.mismatch(got, want.file);
  return rescued === got ? undefined : `expected ${show(rescued)}, got ${show(got)}`;
}

/** How `got` differs from `want`, column by column. */
function columnDiffs(columns: Columns, want: Want, got: EngineRow): string[] {
  const out: string[] = [];
  columns.forEach(([name], i) => {
    if (show(want.data[i]) !== show(got[name]))
      out.push(`${name}: expected ${show(want.data[i])}, got ${show(got[name])}`);
  });
  const rescued = rescuedMismatch(want, got._rescued_data);
  if (rescued) out.push(`_rescued_data: ${rescued}`);
  return out;
}

/** The rows an engine read against the rows the shape wrote up to that version (a multiset). */
export function diffRows(label: string, expected: Expected, actual: readonly EngineRow[]): string[] {
  const columns = [...expected.columns, ...expected.generated];
  const wants: Want[] = expected.rows.map(({ file, manifestVersion, row }, i) => ({
    file,
    manifestVersion,
    data: columns.map(([name, type]) => {
      const value = row[name];
      if (value instanceof Rescued) throw new Error(`${label}: row ${i}: ${name} is not _rescued_data`);
      return canonical(value ?? null, type, `${label}: row ${i} column ${name}`);
    }),
    rescued: row._rescued_data,
  }));
  // Actual rows indexed by (manifest version, file) and then by their data columns: exact matches first.
  const index = new Map<string, Map<string, EngineRow[]>>();
  for (const row of actual) {
    const group = groupOf(row._manifest_version, row._source_file);
    const byData = index.get(group) ?? new Map<string, EngineRow[]>();
    index.set(group, byData);
    const key = show(columns.map(([name]) => row[name]));
    byData.set(key, [...(byData.get(key) ?? []), row]);
  }
  const missing: Want[] = [];
  for (const want of wants) {
    const candidates = index.get(groupOf(want.manifestVersion, want.file))?.get(show(want.data)) ?? [];
    const at = candidates.findIndex((row) => rescuedMismatch(want, row._rescued_data) === undefined);
    if (at >= 0) candidates.splice(at, 1);
    else missing.push(want);
  }
  const unexpected = [...index.values()].flatMap((byData) => [...byData.values()].flat());
  if (missing.length === 0 && unexpected.length === 0) return [];
  const lines = [
    `${label}: ${actual.length} rows read, ${wants.length} written; ${missing.length} not read:`,
  ];
  for (const want of missing) {
    const where = `${want.file} (manifest version ${want.manifestVersion})`;
    // The closest row read from the same file and version names the columns that differ.
    const group = groupOf(want.manifestVersion, want.file);
    const near = unexpected.findIndex((r) => groupOf(r._manifest_version, r._source_file) === group);
    if (near >= 0) {
      const [got] = unexpected.splice(near, 1);
      if (got) lines.push(`  ${where}: ${columnDiffs(columns, want, got).join('; ')}`);
    } else {
      lines.push(`  ${where}: row ${show(want.data)} rescued ${show(want.rescued)} was not read`);
    }
  }
  for (const row of unexpected) lines.push(`  read but never written: ${show(row)}`);
  return lines.slice(0, MAX_LINES);
}

/** Spark and delta-rs must read the same schema and the same rows, value for value. */
export function diffEngines(
  label: string,
  a: { readonly name: string; readonly schema: readonly SchemaField[]; readonly rows: readonly EngineRow[] },
  b: { readonly name: string; readonly schema: readonly SchemaField[]; readonly rows: readonly EngineRow[] },
): string[] {
  const lines: string[] = [];
  if (show(a.schema) !== show(b.schema))
    lines.push(`${label}: ${a.name} schema ${show(a.schema)}, ${b.name} schema ${show(b.schema)}`);
  const counts = new Map<string, number>();
  for (const row of a.rows) counts.set(show(row), (counts.get(show(row)) ?? 0) + 1);
  const onlyB: string[] = [];
  for (const row of b.rows) {
    const key = show(row);
    const n = counts.get(key) ?? 0;
    if (n > 0) counts.set(key, n - 1);
    else onlyB.push(key);
  }
  const onlyA = [...counts].flatMap(([key, n]) => Array<string>(n).fill(key));
  if (onlyA.length > 0 || onlyB.length > 0) {
    lines.push(`${label}: ${a.name} read ${a.rows.length} rows, ${b.name} ${b.rows.length}`);
    for (const row of onlyA) lines.push(`  only ${a.name}: ${row}`);
    for (const row of onlyB) lines.push(`  only ${b.name}: ${row}`);
  }
  return lines.slice(0, MAX_LINES);
}

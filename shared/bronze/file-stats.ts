import { type BronzeType, decimalOf } from './delta-types.ts';
import type { OutputRow } from './fit-record.ts';
import type { Column } from './schema.ts';
import { dateText, decimalText, doubleText, timestampText } from './values.ts';

/**
 * Per-file statistics for data skipping (PROTOCOL.md "Per-file Statistics"): `numRecords`, and
 * `minValues` / `maxValues` / `nullCount` mirroring the schema, for the first INDEXED_LEAVES leaf columns in
 * schema order (system columns included). Every bound is exact or looser, never tighter: a reader skips a
 * file only when no row of it can match, so a bound that is too tight would lose rows from query results.
 */

/**
 * Delta's default `delta.dataSkippingNumIndexedCols`. Spark counts leaf columns: each field of a struct is
 * one, an array or a map is one (StatisticsCollection `truncateSchema`).
 */
export const INDEXED_LEAVES = 32;
/** Spark's `spark.databricks.io.skipping.stringPrefixLength` default: string bounds keep 32 UTF-16 units. */
export const STRING_PREFIX = 32;

/** The maximum code point, Spark's tie-breaker for a cut string maximum. */
const MAX_CODE_POINT = '\u{10FFFF}';
const ASCII_MAX = 0x7f;

/**
 * Compares two strings by code point, which is the order of their UTF-8 bytes (Spark's and arrow's string
 * order); JavaScript's `<` compares UTF-16 units, which puts U+10000 and above before U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800..DFFF) encode code points above U+FFFF: move them above U+E000..U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) return shift(x) - shift(y);
    return x - y;
  }
  return a.length - b.length;
}
const shift = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit + 0x2000);

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** A lower bound of `s`: its first `prefix` units, a surrogate pair never split (Spark's `truncateMinStringAgg`). */
export function truncateMin(s: string, prefix = STRING_PREFIX): string {
  if (s.length <= prefix) return s;
  const pair = isHigh(s.charCodeAt(prefix - 1)) && isLow(s.charCodeAt(prefix));
  return s.slice(0, pair ? prefix + 1 : prefix);
}

/**
 * An upper bound of `s` at most about `2 * prefix` units long (Spark's `truncateMaxStringAgg`): the prefix
 * plus a character greater than the one cut at, U+007F when that is enough, else U+10FFFF (skipping cut
 * points that are U+10FFFF themselves). Undefined when no such bound exists within the limit: no maximum
 * is then written, which readers take as unknown.
 */
export function truncateMax(s: string, prefix = STRING_PREFIX): string | undefined {
  if (s.length <= prefix) return s;
  let cut = truncateMin(s, prefix).length;
  while (cut <= 2 * prefix) {
    if (cut >= s.length) return s;
    if (s.startsWith(MAX_CODE_POINT, cut)) {
      cut += 2;
      continue;
    }
    return s.slice(0, cut) + (s.charCodeAt(cut) < ASCII_MAX ? '\x7f' : MAX_CODE_POINT);
  }
  return undefined;
}

const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const MS_PER_DAY = 86_400_000n;
/** Days of 0001-01-01 and 9999-12-31 from the epoch: bounds outside the four-digit years are not written. */
const FIRST_DAY = -719_162;
const LAST_DAY = 2_932_896;

/**
 * A timestamp bound in milliseconds, as PROTOCOL.md's footnote ("Timestamp columns are truncated down to
 * milliseconds") and Spark's stats JSON have it: a minimum rounds down, a maximum rounds UP, so it is an
 * upper bound as written ("greater than or equal to all valid values"). Spark and delta-kernel-rs widen a
 * maximum by up to 1 ms when they read it, which only loosens it further; a reader that does not still
 * keeps every file it must.
 */
function timestampBound(micros: bigint, utc: boolean, up: boolean): string | undefined {
  const ms = up ? -floorDiv(-micros, 1000n) : floorDiv(micros, 1000n);
  const day = Number(floorDiv(ms, MS_PER_DAY));
  if (day < FIRST_DAY || day > LAST_DAY) return undefined;
  return JSON.stringify(timestampText(ms, 1000n, utc));
}

/** How one leaf type's values are ordered and written as a JSON bound; undefined: nullCount only. */
interface Ordering {
  /** The value as compared and bounded, or undefined when it cannot be bounded (NaN, a lone surrogate...). */
  normalize(cell: unknown): unknown;
  less(a: unknown, b: unknown): boolean;
  /** The JSON text of the bound, or undefined when none can be written. */
  json(value: unknown, max: boolean): string | undefined;
}

const numeric = (normalize: (cell: unknown) => unknown, json: (v: unknown) => string): Ordering => ({
  normalize,
  less: (a, b) => (a as number | bigint) < (b as number | bigint),
  json,
});

const integral = (cell: unknown) => (typeof cell === 'number' || typeof cell === 'bigint' ? cell : undefined);
/** JSON has no NaN or infinity: a file holding one gets no bounds for the column. */
const finite = (cell: unknown, round: (v: number) => number) =>
  typeof cell === 'number' && Number.isFinite(cell) ? round(cell) : undefined;
const asBigint = (cell: unknown) =>
  typeof cell === 'bigint'
    ? cell
    : typeof cell === 'number' && Number.isInteger(cell)
      ? BigInt(cell)
      : undefined;

interface WellFormed {
  isWellFormed(): boolean;
}

function orderingOf(type: BronzeType): Ordering | undefined {
  if (typeof type !== 'string') return undefined;
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
      return numeric(integral, String);
    case 'float':
      // The column stores float32: bound the value as stored.
      return numeric(
        (c) => finite(c, Math.fround),
        (v) => doubleText(v as number),
      );
    case 'double':
      return numeric(
        (c) => finite(c, (v) => v),
        (v) => doubleText(v as number),
      );
    case 'date':
      return numeric(
        (c) => (typeof c === 'number' && c >= FIRST_DAY && c <= LAST_DAY ? c : undefined),
        (v) => JSON.stringify(dateText(v as number)),
      );
    case 'timestamp':
    case 'timestamp_ntz': {
      const utc = type === 'timestamp';
      return {
        normalize: asBigint,
        less: (a, b) => (a as bigint) < (b as bigint),
        json: (v, max) => timestampBound(v as bigint, utc, max),
      };
    }
    case 'string':
      return {
        // A lone surrogate is written to Parquet as U+FFFD: bounds from the JS string could be too tight.
        normalize: (c) =>
          typeof c === 'string' && (c as unknown as WellFormed).isWellFormed() ? c : undefined,
        less: (a, b) => compareCodePoints(a as string, b as string) < 0,
        json: (v, max) => {
          const bound = max ? truncateMax(v as string) : truncateMin(v as string);
          return bound === undefined ? undefined : JSON.stringify(bound);
        },
      };
    // Spark keeps no bounds for these (DataSkippingReader `SkippingEligibleDataType`: numbers, dates,
    // timestamps, strings), so neither does the sink.
    case 'boolean':
    case 'binary':
      return undefined;
  }
  const decimal = decimalOf(type);
  if (!decimal) return undefined;
  return numeric(asBigint, (v) => decimalText(v as bigint, decimal.scale));
}

interface Leaf {
  readonly path: readonly string[];
  readonly ordering: Ordering | undefined;
  nulls: number;
  min: unknown;
  max: unknown;
  /** A value that cannot be bounded was seen: no bounds for this file. */
  unbounded: boolean;
}

/** The leaf columns of `columns` in schema order, structs walked into, the first `limit` of them. */
function leavesOf(columns: readonly Column[], limit: number): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (path: string[], type: BronzeType) => {
    if (leaves.length >= limit) return;
    if (typeof type !== 'string' && type.type === 'struct') {
      for (const f of type.fields) walk([...path, f.name], f.type);
      return;
    }
    leaves.push({
      path,
      ordering: orderingOf(type),
      nulls: 0,
      min: undefined,
      max: undefined,
      unbounded: false,
    });
  };
  for (const c of columns) walk([c.name], c.type);
  return leaves;
}

/** A leaf's cell in a row: null when the leaf or any struct above it is null. */
function cellAt(row: OutputRow, path: readonly string[]): unknown {
  let value: unknown = row;
  for (const name of path) {
    if (value === null || value === undefined) return null;
    value = (value as Record<string, unknown>)[name];
  }
  return value ?? null;
}

/** A JSON object tree of pre-rendered values, in schema order. */
type Tree = Map<string, string | Tree>;

function put(tree: Tree, path: readonly string[], json: string): void {
  let node = tree;
  for (const name of path.slice(0, -1)) {
    let next = node.get(name);
    if (!(next instanceof Map)) {
      next = new Map();
      node.set(name, next);
    }
    node = next;
  }
  node.set(path[path.length - 1] as string, json);
}

const render = (tree: Tree): string =>
  `{${[...tree].map(([k, v]) => `${JSON.stringify(k)}:${typeof v === 'string' ? v : render(v)}`).join(',')}}`;

/** Collects one data file's statistics as its rows are written. */
export class FileStatsCollector {
  private readonly leaves: Leaf[];
  private rows = 0;

  /** `columns`: every column of the file, data then system (schema.ts `allColumns`). */
  constructor(columns: readonly Column[], limit = INDEXED_LEAVES) {
    this.leaves = leavesOf(columns, limit);
  }

  add(row: OutputRow): void {
    this.rows += 1;
    for (const leaf of this.leaves) {
      const cell = cellAt(row, leaf.path);
      if (cell === null) {
        leaf.nulls += 1;
        continue;
      }
      const o = leaf.ordering;
      if (!o || leaf.unbounded) continue;
      const value = o.normalize(cell);
      if (value === undefined) {
        leaf.unbounded = true;
        continue;
      }
      if (leaf.min === undefined || o.less(value, leaf.min)) leaf.min = value;
      if (leaf.max === undefined || o.less(leaf.max, value)) leaf.max = value;
    }
  }

  /** The `add` action's `stats` string. */
  json(): string {
    const min: Tree = new Map();
    const max: Tree = new Map();
    const nulls: Tree = new Map();
    for (const leaf of this.leaves) {
      put(nulls, leaf.path, String(leaf.nulls));
      const o = leaf.ordering;
      if (!o || leaf.unbounded || leaf.min === undefined) continue;
      const low = o.json(leaf.min, false);
      const high = o.json(leaf.max, true);
      if (low !== undefined) put(min, leaf.path, low);
      if (high !== undefined) put(max, leaf.path, high);
    }
    return `{"numRecords":${this.rows},"minValues":${render(min)},"maxValues":${render(max)},"nullCount":${render(nulls)}}`;
  }
}

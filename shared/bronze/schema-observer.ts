import type { BronzeConfig } from './config.ts';
import { type BronzeType, mergeTypes } from './delta-types.ts';
import type { Column } from './schema.ts';
import { columnNameProblem } from './schema.ts';
import { classifyNumber, DoubleLiteral, Unstorable } from './values.ts';

interface Seen {
  /** The first spelling of a name (case-insensitive) in the version; the others are rescued. */
  readonly winner: boolean;
  type: BronzeType | undefined;
  /** A long seen that a double cannot hold exactly: long and double then widen to string, not double. */
  inexactLong: boolean;
}

const exactAsDouble = (v: bigint) => BigInt(Number(v)) === v;

/** The type an untyped value has on its own; undefined for null and numbers without an exact type. */
function untypedType(value: unknown, csv: boolean, seen: Seen): BronzeType | undefined {
  if (csv) {
    const text = value as string;
    if (text === '') return undefined;
    const n = classifyNumber(text);
    if (n?.kind === 'long') {
      if (typeof n.value === 'bigint' && !exactAsDouble(n.value)) seen.inexactLong = true;
      return 'long';
    }
    if (n) return n.kind === 'double' ? 'double' : undefined;
    return text === 'true' || text === 'false' ? 'boolean' : 'string';
  }
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isSafeInteger(value) ? 'long' : 'double';
    case 'bigint':
      if (!exactAsDouble(value)) seen.inexactLong = true;
      return 'long';
  }
  if (value instanceof DoubleLiteral) return 'double';
  if (value instanceof Unstorable) return undefined;
  // Objects and arrays are kept as their JSON text.
  return 'string';
}

/** JSON and CSV: long and double widen to double when every long is exact as a double; any other mix to string. */
function widenUntyped(a: BronzeType | undefined, b: BronzeType | undefined, seen: Seen) {
  if (a === undefined) return b;
  if (b === undefined || a === b) return a;
  if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long'))
    return seen.inexactLong ? 'string' : 'double';
  return 'string';
}

/**
 * Column types observed over a version's records, in first-seen order (pass 1 of a version). JSON and CSV
 * columns are inferred from values; Parquet columns come from each file's declared schema, two files'
 * types merged only where every value converts exactly (delta-types.ts `mergeTypes`), else the first
 * file's type stands and the other file's values that do not fit are rescued.
 */
export class SchemaObserver {
  private readonly seen = new Map<string, Seen>();
  /** Lower-cased name -> the spelling that claimed it. */
  private readonly spellings = new Map<string, string>();
  private readonly csv: boolean;
  private readonly typed: boolean;

  constructor(format: BronzeConfig['format']) {
    this.csv = format === 'csv';
    this.typed = format === 'parquet';
  }

  private entry(name: string): Seen {
    let seen = this.seen.get(name);
    if (!seen) {
      const lower = name.toLowerCase();
      const first = !this.spellings.has(lower);
      if (first) this.spellings.set(lower, name);
      seen = { winner: first && columnNameProblem(name) === undefined, type: undefined, inexactLong: false };
      this.seen.set(name, seen);
    }
    return seen;
  }

  /** Columns a file declares (Parquet): their types count even where every value is null. */
  declare(columns: readonly Column[]): void {
    for (const { name, type } of columns) {
      const seen = this.entry(name);
      if (!seen.winner) continue;
      seen.type = seen.type === undefined ? type : (mergeTypes(seen.type, type) ?? seen.type);
    }
  }

  /** One record's values (JSON, CSV); a Parquet file's rows add nothing to what it declared. */
  observe(values: Readonly<Record<string, unknown>>): void {
    if (this.typed) return;
    for (const name of Object.keys(values)) {
      const seen = this.entry(name);
      if (!seen.winner) continue;
      const value = values[name];
      if (value === null || value === undefined) continue;
      const type = untypedType(value, this.csv, seen);
      if (type !== seen.type) seen.type = widenUntyped(seen.type, type, seen);
    }
  }

  /** Columns seen; a column seen only as null is a string (it can hold anything later). */
  columns(): Column[] {
    return [...this.seen]
      .filter(([, s]) => s.winner)
      .map(([name, s]) => ({ name, type: s.type ?? 'string' }));
  }
}

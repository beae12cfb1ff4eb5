import type { BronzeConfig } from './config.ts';
import { type BronzeType, mergeTypes } from './delta-types.ts';
import { csvShape, mergeJson, type Shape, shapeType, widen } from './inferred-shape.ts';
import type { Column } from './schema.ts';
import { columnNameProblem } from './schema.ts';

interface Seen {
  /** The first spelling of a name (case-insensitive) in the version; the others are rescued. */
  readonly winner: boolean;
  /** Parquet: the declared type. */
  type: BronzeType | undefined;
  /** JSON and CSV: the type inferred from the values. */
  shape: Shape;
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
  private readonly nestedTyped: boolean;

  constructor(format: BronzeConfig['format'], nested: BronzeConfig['nested'] = 'typed') {
    this.csv = format === 'csv';
    this.typed = format === 'parquet';
    this.nestedTyped = nested === 'typed';
  }

  private entry(name: string): Seen {
    let seen = this.seen.get(name);
    if (!seen) {
      const lower = name.toLowerCase();
      const first = !this.spellings.has(lower);
      if (first) this.spellings.set(lower, name);
      seen = { winner: first && columnNameProblem(name) === undefined, type: undefined, shape: undefined };
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
      seen.shape = this.csv
        ? widen(seen.shape, csvShape(value as string))
        : mergeJson(seen.shape, value, this.nestedTyped);
    }
  }

  /** Columns seen; a column seen only as null is a string (it can hold anything later). */
  columns(): Column[] {
    return [...this.seen]
      .filter(([, s]) => s.winner)
      .map(([name, s]) => ({ name, type: this.typed ? (s.type ?? 'string') : shapeType(s.shape) }));
  }
}

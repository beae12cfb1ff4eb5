/**
 * A table shape for `npm run test:engines`: landing files per manifest version, the table's bronze config
 * and the rows each file must give. test/engines/shapes.ts lists them; every shape is written by the real
 * sink on the emulator and read back by Spark + Delta Lake and by delta-rs (engines.test.ts).
 */
import type { BronzeConfigInput } from '../../shared/bronze/config.ts';
import type { WrittenTable } from './write-table.ts';

/**
 * A value as it must read back. `long` columns take a number or a bigint (past 2^53), `double` a number,
 * `string` and `boolean` their own. Types without a JS literal are given in the canonical form engines.py
 * answers: timestamp `2024-01-02T03:04:05.123456Z`, timestamp_ntz the same without `Z`, date
 * `2024-01-02`, decimal its digits with the scale (`12.30`), binary lowercase hex, struct an object, array
 * an array, map an array of `[key, value]` pairs in file order.
 */
export type Value =
  | string
  | number
  | bigint
  | boolean
  | null
  | readonly Value[]
  | { readonly [k: string]: Value };

/** What `_rescued_data` must hold when it is not null and not given as its exact text. */
export class Rescued {
  private constructor(
    readonly fields: Readonly<Record<string, unknown>> | undefined,
    readonly corrupt: string | undefined,
    readonly error: RegExp | undefined,
  ) {}

  /** Values kept out of their columns: the JSON object `{...fields, _file_path}`, compared parsed. */
  static values(fields: Readonly<Record<string, unknown>>): Rescued {
    return new Rescued(fields, undefined, undefined);
  }

  /** A record that could not be parsed: its raw text and a reason (`error`, when given, must match it). */
  static record(raw: string, error?: RegExp): Rescued {
    return new Rescued(undefined, raw, error);
  }

  /** Why `text` does not match for a row of `file`, or undefined when it does. */
  mismatch(text: unknown, file: string): string | undefined {
    if (typeof text !== 'string') return `expected rescued data, got ${JSON.stringify(text)}`;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return `not JSON: ${text}`;
    }
    const want: Record<string, unknown> = this.fields
      ? { ...this.fields, _file_path: file }
      : { _corrupt_record: this.corrupt, _error: parsed._error, _file_path: file };
    if (!this.fields && (typeof parsed._error !== 'string' || parsed._error === ''))
      return `a corrupt record without its reason: ${text}`;
    if (this.error && !this.error.test(String(parsed._error)))
      return `reason ${JSON.stringify(parsed._error)} does not match ${this.error}`;
    return sameJson(parsed, want) ? undefined : `expected ${JSON.stringify(want)}, got ${text}`;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

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

/** One manifest version: the files that land for it, and what they must become in Delta version index. */
export interface VersionSpec {
  /** Landing files, by key under the table's prefix. */
  readonly files: Readonly<Record<string, string | Uint8Array>>;
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
  /** Manifest versions 1..n, which become Delta versions 0..n-1. */
  readonly versions: readonly VersionSpec[];
  /** Asserts the table is the shape it claims (several files a version, files moved...); throws if not. */
  readonly written?: (table: WrittenTable) => Promise<void>;
}

/** The rows and schema a reader must see at one Delta version: what the shape wrote up to it. */
export interface Expected {
  readonly columns: Columns;
  readonly rows: ReadonlyArray<{
    readonly file: string;
    readonly manifestVersion: number;
    readonly row: ExpectedRow;
  }>;
}

export function columnsAt(shape: Shape, deltaVersion: number): Columns {
  for (let v = deltaVersion; v >= 0; v--) {
    const columns = shape.versions[v]?.columns;
    if (columns) return columns;
  }
  throw new Error(`shape ${shape.name}: its first version must give its columns`);
}

/** Rows of Delta versions `from`..`to` as the shape wrote them, `sourceFile` naming each landing file. */
export function expectedRows(
  shape: Shape,
  from: number,
  to: number,
  sourceFile: (key: string) => string,
): Expected {
  const rows: Expected['rows'][number][] = [];
  for (let v = from; v <= to; v++) {
    const spec = shape.versions[v];
    if (!spec) throw new Error(`shape ${shape.name} has no version ${v}`);
    const known = new Set([...columnsAt(shape, v).map(([name]) => name), '_rescued_data']);
    for (const [key, fileRows] of Object.entries(spec.rows)) {
      for (const row of fileRows) {
        const stray = Object.keys(row).filter((c) => !known.has(c));
        if (stray.length > 0)
          throw new Error(`shape ${shape.name} version ${v}: ${stray.join(', ')} not among its columns`);
        rows.push({ file: sourceFile(key), manifestVersion: v + 1, row });
      }
    }
  }
  return { columns: columnsAt(shape, to), rows };
}

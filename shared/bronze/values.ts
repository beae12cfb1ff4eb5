import { type BronzeType, decimalOf } from './delta-types.ts';

/**
 * How values travel through the sink, and their exact text. A "cell" is a value as its Delta column stores
 * it and the Parquet writer takes it: string; bigint for `long`; number for `integer`/`short`/`byte`/
 * `float`/`double` and for `date` (days since 1970-01-01); bigint microseconds since 1970-01-01 for
 * `timestamp` (UTC) and `timestamp_ntz` (wall clock); bigint unscaled value for `decimal(p,s)`; Uint8Array
 * for `binary`; a null-prototype object for a struct; an array for an array; an array of `{key, value}` for a
 * map. Values from JSON and CSV are untyped until fitted: JSON strings, numbers, booleans, objects, arrays,
 * plus the number forms below; CSV values are their text.
 */

/** A value no Delta type here holds exactly: it is rescued with this exact text (or fits a string column). */
export class Unstorable {
  constructor(
    /** The value's exact text, what a `string` column would hold. */
    readonly text: string,
    /** The same as JSON, what `_rescued_data` holds: a number literal stays a number. */
    readonly json: string,
    readonly reason: string,
  ) {}

  static number(literal: string, reason: string): Unstorable {
    return new Unstorable(literal, literal, reason);
  }
}

/** A JSON number written as a decimal or exponent (`1.0`, `1e3`) whose value is whole: a `double` by its
 * spelling (as Spark infers it), kept apart from `1`, which is a `long`. */
export class DoubleLiteral {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const inInt64 = (v: bigint) => v >= INT64_MIN && v <= INT64_MAX;

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
export const STRICT_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** `-0012.3400e1` -> `-1234e-1`: sign, significant digits, exponent; zero keeps its sign. */
export function canonical(text: string): string | undefined {
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  let digits = (int + frac).replace(/^0+/, '');
  let exponent = BigInt(exp) - BigInt(frac.length);
  if (digits === '') return `${sign}0`;
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += BigInt(trailing);
  return `${sign}${digits}e${exponent}`;
}

/** The shortest text of a double that reads back as it (`-0` keeps its sign). */
export const doubleText = (v: number) => (Object.is(v, -0) ? '-0' : String(v));

/** A JSON or CSV number literal classified without loss. Undefined when the text is not a number. */
export type NumberLiteral =
  | { readonly kind: 'long'; readonly value: number | bigint }
  | { readonly kind: 'double'; readonly value: number; readonly whole: boolean }
  | { readonly kind: 'unstorable'; readonly reason: string };

/**
 * An integer literal is a `long` when it is within int64 (a number when it is a safe integer, else a bigint);
 * a decimal or exponent literal is a `double` when the double prints back as the same number; anything else
 * has no exact Delta type here and is rescued with its text, never rounded.
 */
export function classifyNumber(text: string): NumberLiteral | undefined {
  if (!STRICT_NUMBER.test(text)) return undefined;
  if (/^-?\d+$/.test(text)) {
    const big = BigInt(text);
    if (!inInt64(big)) return { kind: 'unstorable', reason: 'an integer beyond the long range' };
    const n = Number(big);
    return { kind: 'long', value: Number.isSafeInteger(n) ? n : big };
  }
  const value = Number(text);
  if (Number.isFinite(value) && canonical(doubleText(value)) === canonical(text))
    return { kind: 'double', value, whole: Number.isInteger(value) };
  return { kind: 'unstorable', reason: 'more digits (or range) than a double holds' };
}

/** A JSON number literal as the JSON value the sink carries: number, bigint, DoubleLiteral or Unstorable. */
export function jsonNumber(text: string): unknown {
  const c = classifyNumber(text);
  if (!c) return Unstorable.number(text, 'not a number');
  if (c.kind === 'unstorable') return Unstorable.number(text, c.reason);
  if (c.kind === 'double' && c.whole) return new DoubleLiteral(c.value, text);
  return c.value;
}

/** JSON text of an untyped value (a JSON record's value, a CSV field), exact for every number form. */
export function untypedJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // A whole number came from an integer literal (json-parse.ts), where -0 is 0.
      if (Number.isInteger(value)) return String(value);
      return Number.isFinite(value) ? doubleText(value) : JSON.stringify(String(value));
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
  }
  if (value instanceof Unstorable) return value.json;
  if (value instanceof DoubleLiteral) return value.text;
  if (Array.isArray(value)) return `[${value.map(untypedJson).join(',')}]`;
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('base64'));
  const entries = Object.keys(value as object).map(
    (k) => `${JSON.stringify(k)}:${untypedJson((value as Record<string, unknown>)[k])}`,
  );
  return `{${entries.join(',')}}`;
}

/** The text a string column holds for an untyped value: a string as is, anything else as its JSON. */
export function untypedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Unstorable) return value.text;
  return untypedJson(value);
}

const pad = (n: number | bigint, width: number) => String(n).padStart(width, '0');

/** `YYYY-MM-DD` of a day count (proleptic Gregorian, as Delta and Spark); years past 9999 as `+YYYYYY`. */
export function dateText(days: number): string {
  // Howard Hinnant's civil_from_days: exact for any day count, unlike Date (limited to ±100M days).
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : `${y < 0 ? '-' : '+'}${pad(Math.abs(y), 6)}`;
  return `${year}-${pad(m, 2)}-${pad(d, 2)}`;
}

const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/** `HH:MM:SS.ffffff` of a time of day in `perSecond` units (1000, 1e6 or 1e9), all fraction digits kept. */
export function timeOfDayText(units: bigint, perSecond: bigint): string {
  const digits = String(perSecond).length - 1;
  const seconds = floorDiv(units, perSecond);
  const fraction = units - seconds * perSecond;
  const h = seconds / 3600n;
  const m = (seconds % 3600n) / 60n;
  const s = seconds % 60n;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(fraction, digits)}`;
}

/** ISO-8601 of an instant (`...Z`) or a wall-clock time, every fraction digit of its unit kept. */
export function timestampText(units: bigint, perSecond: bigint, utc: boolean): string {
  const perDay = 86_400n * perSecond;
  const days = floorDiv(units, perDay);
  const inDay = units - days * perDay;
  return `${dateText(Number(days))}T${timeOfDayText(inDay, perSecond)}${utc ? 'Z' : ''}`;
}

/** `123.45` from unscaled 12345 and scale 2; every digit of the scale kept (`1.50`). */
export function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

const base64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/**
 * The exact text of a cell of `type`, as a string column holds it: numbers as their digits (decimals with
 * every digit of their scale), dates and timestamps as ISO-8601 with every microsecond, binary as base64,
 * nested values as JSON.
 */
export function cellText(cell: unknown, type: BronzeType): string {
  if (type === 'string' && typeof cell === 'string') return cell;
  const json = cellJson(cell, type);
  return json.startsWith('"') ? (JSON.parse(json) as string) : json;
}

/** The JSON of a cell of `type`: integers and decimals as exact number literals, the rest as in cellText. */
export function cellJson(cell: unknown, type: BronzeType): string {
  if (cell === null || cell === undefined) return 'null';
  if (cell instanceof Unstorable) return cell.json;
  if (typeof type === 'string') {
    switch (type) {
      case 'string':
        return JSON.stringify(cell);
      case 'long':
      case 'integer':
      case 'short':
      case 'byte':
      case 'boolean':
        return String(cell);
      case 'float':
      case 'double':
        return Number.isFinite(cell) ? doubleText(cell as number) : JSON.stringify(String(cell));
      case 'binary':
        return JSON.stringify(base64(cell as Uint8Array));
      case 'date':
        return JSON.stringify(dateText(cell as number));
      case 'timestamp':
        return JSON.stringify(timestampText(cell as bigint, 1_000_000n, true));
      case 'timestamp_ntz':
        return JSON.stringify(timestampText(cell as bigint, 1_000_000n, false));
    }
    const decimal = decimalOf(type);
    if (decimal) return decimalText(cell as bigint, decimal.scale);
    return untypedJson(cell);
  }
  switch (type.type) {
    case 'struct': {
      const o = cell as Record<string, unknown>;
      return `{${type.fields.map((f) => `${JSON.stringify(f.name)}:${cellJson(o[f.name], f.type)}`).join(',')}}`;
    }
    case 'array':
      return `[${(cell as unknown[]).map((e) => cellJson(e, type.elementType)).join(',')}]`;
    case 'map': {
      // A JSON object keyed by each key's exact text: keys are unique in a map, and so are their texts.
      const entries = (cell as { key: unknown; value: unknown }[]).map(
        (e) => `${JSON.stringify(cellText(e.key, type.keyType))}:${cellJson(e.value, type.valueType)}`,
      );
      return `{${entries.join(',')}}`;
    }
  }
}

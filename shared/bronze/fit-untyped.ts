import { type BronzeType, decimalOf } from './delta-types.ts';
import { type Converter, convertNumber, MISFIT, typedConverter } from './fit.ts';
import { temporalOf } from './temporal-text.ts';
import {
  canonical,
  classifyNumber,
  DoubleLiteral,
  doubleText,
  inInt64,
  STRICT_NUMBER,
  Unstorable,
  untypedText,
} from './values.ts';

/**
 * Fitting untyped values (a JSON value, a CSV field's text) to a column's type, exactly or not at all
 * (docs/bronze.md, "JSON and CSV"). A value has a type of its own (`naturalCell`: a number literal's, a
 * boolean, a date or timestamp text, else a string), which then converts exactly (fit.ts); decimals and
 * floats are read from the number's literal, binary from base64 text, structs, arrays and maps from JSON
 * objects and arrays, element by element.
 */

/** The type and cell an untyped JSON value or CSV text has on its own; undefined when it has none. */
export function naturalCell(value: unknown, csv: boolean): { type: BronzeType; cell: unknown } | undefined {
  if (csv) {
    const text = value as string;
    const n = classifyNumber(text);
    if (n?.kind === 'long') return { type: 'long', cell: BigInt(n.value) };
    if (n?.kind === 'double') return { type: 'double', cell: n.value };
    if (n) return undefined;
    if (text === 'true' || text === 'false') return { type: 'boolean', cell: text === 'true' };
    return textCell(text);
  }
  switch (typeof value) {
    case 'string':
      return textCell(value);
    case 'boolean':
      return { type: 'boolean', cell: value };
    case 'bigint':
      return inInt64(value) ? { type: 'long', cell: value } : undefined;
    case 'number':
      return Number.isSafeInteger(value)
        ? { type: 'long', cell: BigInt(value) }
        : { type: 'double', cell: value };
  }
  if (value instanceof DoubleLiteral) return { type: 'double', cell: value.value };
  return undefined;
}

/** A date or timestamp when the text spells one exactly (temporal-text.ts); none when inexact; else a string. */
function textCell(text: string): { type: BronzeType; cell: unknown } | undefined {
  const temporal = temporalOf(text);
  if (temporal === 'inexact') return undefined;
  return temporal ?? { type: 'string', cell: text };
}

/**
 * The literal of a number value (JSON number, CSV text in JSON number syntax), or undefined. `strings`: a
 * JSON string in number syntax too (Spark's JSON reader reads a decimal column's string as a decimal).
 */
function numberLiteral(value: unknown, csv: boolean, strings = false): string | undefined {
  if (csv || (strings && typeof value === 'string'))
    return STRICT_NUMBER.test(value as string) ? (value as string) : undefined;
  switch (typeof value) {
    case 'number':
      // A whole number came from an integer literal (json-parse.ts); any other prints back as its literal.
      return Number.isInteger(value) ? String(value) : doubleText(value);
    case 'bigint':
      return value.toString();
  }
  if (value instanceof DoubleLiteral) return value.text;
  if (value instanceof Unstorable && value.json === value.text && STRICT_NUMBER.test(value.text))
    return value.text;
  return undefined;
}

/** Exponents past this are no decimal(p <= 38) and would make huge bigints: such a literal fits none. */
const MAX_EXPONENT = 400;

/** The exact (unscaled, scale) of a number literal, or undefined past MAX_EXPONENT. */
function literalDecimal(text: string): { unscaled: bigint; scale: number } | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  const exponent = Number(exp);
  if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
  let unscaled = BigInt(`${sign}${int}${frac}`);
  let scale = frac.length - exponent;
  if (scale < 0) {
    unscaled *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { unscaled, scale };
}

/** The shortest text of a float (a double holding a float32 value) that reads back as it. */
function floatText(f: number): string {
  if (Object.is(f, -0)) return '-0';
  for (let digits = 1; digits < 9; digits++) {
    const text = f.toPrecision(digits);
    if (Math.fround(Number(text)) === f) return text;
  }
  return f.toPrecision(9);
}

/** A float holds a literal when its shortest text is the same number (`0.1` yes, `16777217` no). */
function floatOfLiteral(text: string): number | typeof MISFIT {
  const f = Math.fround(Number(text));
  if (!Number.isFinite(f)) return MISFIT;
  return canonical(floatText(f)) === canonical(text) ? f : MISFIT;
}

/** Base64 that encodes back to the very text (padding included), so the bytes give back the value. */
function base64Bytes(text: string): Uint8Array | typeof MISFIT {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return MISFIT;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : MISFIT;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Unstorable) &&
  !(v instanceof DoubleLiteral);

/**
 * How an untyped value (a JSON value, a CSV field) fits a column of type `to`: as its exact text in a
 * string column; otherwise as the cell of its own type, converted exactly. Numbers without an exact type
 * only fit a string or decimal column; objects and arrays a string column (as JSON) or a nested one.
 */
export function untypedConverter(to: BronzeType, csv: boolean): Converter {
  if (to === 'string') return csv ? (v) => v : untypedText;
  if (typeof to !== 'string') return csv ? () => MISFIT : nestedConverter(to);
  if (to === 'binary') return (v) => (typeof v === 'string' ? base64Bytes(v) : MISFIT);
  const decimal = decimalOf(to);
  if (decimal)
    return (v) => {
      const literal = numberLiteral(v, csv, true);
      const exact = literal === undefined ? undefined : literalDecimal(literal);
      return exact ? convertNumber(exact.unscaled, `decimal(38,${exact.scale})`, to) : MISFIT;
    };
  if (to === 'float')
    return (v) => {
      const literal = numberLiteral(v, csv);
      return literal === undefined ? MISFIT : floatOfLiteral(literal);
    };
  const fromLong = typedConverter('long', to);
  const fromDouble = typedConverter('double', to);
  const fromBoolean = typedConverter('boolean', to);
  return (v) => {
    // The common cases first, without an allocation.
    if (to === 'long' && typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
    if (to === 'double' && typeof v === 'number') return v;
    const natural = naturalCell(v, csv);
    if (!natural) return MISFIT;
    switch (natural.type) {
      case 'long':
        return fromLong(natural.cell);
      case 'double':
        return fromDouble(natural.cell);
      case 'boolean':
        return fromBoolean(natural.cell);
      default:
        return natural.type === to ? natural.cell : MISFIT;
    }
  };
}

/** JSON objects into a struct (every key a field) or a map, JSON arrays into an array. */
function nestedConverter(to: Exclude<BronzeType, string>): Converter {
  switch (to.type) {
    case 'array': {
      const element = untypedConverter(to.elementType, false);
      return (v) => {
        if (!Array.isArray(v)) return MISFIT;
        const out: unknown[] = [];
        for (const e of v) {
          const fitted = e === null ? null : element(e);
          if (fitted === MISFIT) return MISFIT;
          out.push(fitted);
        }
        return out;
      };
    }
    case 'map': {
      // A JSON object's keys are text: a key fits the key type as a CSV field would (`"1"` an int key).
      const key = untypedConverter(to.keyType, true);
      const value = untypedConverter(to.valueType, false);
      return (v) => {
        if (!isObject(v)) return MISFIT;
        const out: { key: unknown; value: unknown }[] = [];
        for (const k of Object.keys(v)) {
          const fittedKey = key(k);
          const raw = v[k];
          const fittedValue = raw === null ? null : value(raw);
          if (fittedKey === MISFIT || fittedValue === MISFIT) return MISFIT;
          out.push({ key: fittedKey, value: fittedValue });
        }
        return out;
      };
    }
    case 'struct': {
      const fields = new Map(to.fields.map((f) => [f.name, untypedConverter(f.type, false)]));
      return (v) => {
        if (!isObject(v)) return MISFIT;
        const out: Record<string, unknown> = Object.create(null);
        for (const f of to.fields) out[f.name] = null;
        for (const k of Object.keys(v)) {
          const raw = v[k];
          if (raw === null || raw === undefined) continue;
          // A key the struct does not have would be lost: the whole value is rescued instead.
          const convert = fields.get(k);
          if (!convert) return MISFIT;
          const fitted = convert(raw);
          if (fitted === MISFIT) return MISFIT;
          out[k] = fitted;
        }
        return out;
      };
    }
  }
}

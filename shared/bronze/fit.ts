import { type BronzeType, decimalOf, integralDigits, sameType } from './delta-types.ts';
import { cellText, decimalText, doubleText, Unstorable } from './values.ts';

/**
 * Fitting a value to a column's type: exactly, or not at all (the caller rescues it). Never a rounding, a
 * truncation or a reinterpretation: a number fits any numeric column that holds its value exactly (5 fits a
 * `short`, 2.5 a `decimal(3,1)`, 2^53+1 no `double`); a string, boolean, date, timestamp or binary value
 * only a column of its own type; anything fits a `string` column as its exact text (values.ts).
 */
export const MISFIT: unique symbol = Symbol('misfit');
export type Fitted = unknown;
export type Converter = (value: unknown) => Fitted;

const RANGE: Partial<Record<string, [bigint, bigint]>> = {
  byte: [-128n, 127n],
  short: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  long: [-(2n ** 63n), 2n ** 63n - 1n],
};
const pow10 = (n: number) => 10n ** BigInt(n);
const isFloat = (t: BronzeType) => t === 'float' || t === 'double';
const isNumeric = (t: BronzeType) => integralDigits(t) !== undefined || isFloat(t) || !!decimalOf(t);

/** An exact decimal (unscaled, scale) of a numeric cell; undefined for NaN and infinities. */
function exactDecimal(cell: unknown, from: BronzeType): { unscaled: bigint; scale: number } | undefined {
  if (integralDigits(from) !== undefined) return { unscaled: BigInt(cell as number | bigint), scale: 0 };
  const decimal = decimalOf(from);
  if (decimal) return { unscaled: cell as bigint, scale: decimal.scale };
  const v = cell as number;
  if (!Number.isFinite(v)) return undefined;
  // A double is the number its shortest text spells (the same rule JSON numbers are read by).
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(doubleText(v));
  if (!m) return undefined;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  let unscaled = BigInt(`${sign}${int}${frac}`);
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    unscaled *= pow10(-scale);
    scale = 0;
  }
  return { unscaled, scale };
}

/** The cell of numeric type `to` holding exactly `cell` of numeric type `from`, or MISFIT. */
export function convertNumber(cell: unknown, from: BronzeType, to: BronzeType): Fitted {
  if (isFloat(from) && isFloat(to)) {
    const v = cell as number;
    return to === 'double' || Number.isNaN(v) || Math.fround(v) === v ? v : MISFIT;
  }
  const exact = exactDecimal(cell, from);
  if (!exact) return MISFIT;
  const range = typeof to === 'string' ? RANGE[to] : undefined;
  if (range) {
    const divisor = pow10(exact.scale);
    if (exact.unscaled % divisor !== 0n) return MISFIT;
    const whole = exact.unscaled / divisor;
    if (whole < range[0] || whole > range[1]) return MISFIT;
    return to === 'long' ? whole : Number(whole);
  }
  const decimal = decimalOf(to);
  if (decimal) {
    let unscaled = exact.unscaled;
    if (exact.scale <= decimal.scale) unscaled *= pow10(decimal.scale - exact.scale);
    else {
      const divisor = pow10(exact.scale - decimal.scale);
      if (unscaled % divisor !== 0n) return MISFIT;
      unscaled /= divisor;
    }
    const limit = pow10(decimal.precision);
    return unscaled > -limit && unscaled < limit ? unscaled : MISFIT;
  }
  // To a float or double: when it prints back as the same number (the JSON rule, values.ts).
  const text = decimalText(exact.unscaled, exact.scale);
  const v = to === 'float' ? Math.fround(Number(text)) : Number(text);
  const back = exactDecimal(v, 'double');
  return back && back.unscaled * pow10(exact.scale) === exact.unscaled * pow10(back.scale) ? v : MISFIT;
}

/**
 * How a cell read with type `from` (a Parquet file's declared type) fits a column of type `to`. Built once
 * per (file column, table column), then applied to every row.
 */
export function typedConverter(from: BronzeType, to: BronzeType): Converter {
  if (to === 'string')
    return (v) => (v instanceof Unstorable ? v.text : from === 'string' ? v : cellText(v, from));
  if (sameType(from, to)) return (v) => (v instanceof Unstorable ? MISFIT : v);
  if (isNumeric(from) && isNumeric(to))
    return (v) => (v instanceof Unstorable ? MISFIT : convertNumber(v, from, to));
  if (typeof from === 'string' || typeof to === 'string' || from.type !== to.type) return () => MISFIT;
  if (from.type === 'array' && to.type === 'array') {
    const element = typedConverter(from.elementType, to.elementType);
    return (v) => {
      if (v instanceof Unstorable) return MISFIT;
      const out: unknown[] = [];
      for (const e of v as unknown[]) {
        const fitted = e === null ? null : element(e);
        if (fitted === MISFIT) return MISFIT;
        out.push(fitted);
      }
      return out;
    };
  }
  if (from.type === 'map' && to.type === 'map') {
    const key = typedConverter(from.keyType, to.keyType);
    const value = typedConverter(from.valueType, to.valueType);
    return (v) => {
      if (v instanceof Unstorable) return MISFIT;
      const out: { key: unknown; value: unknown }[] = [];
      for (const e of v as { key: unknown; value: unknown }[]) {
        const k = key(e.key);
        const val = e.value === null ? null : value(e.value);
        if (k === MISFIT || val === MISFIT) return MISFIT;
        out.push({ key: k, value: val });
      }
      return out;
    };
  }
  if (from.type === 'struct' && to.type === 'struct') {
    const fields = from.fields.map((f) => {
      const target = to.fields.find((t) => t.name === f.name);
      return { name: f.name, convert: target && typedConverter(f.type, target.type) };
    });
    return (v) => {
      if (v instanceof Unstorable) return MISFIT;
      const source = v as Record<string, unknown>;
      const out: Record<string, unknown> = Object.create(null);
      for (const t of to.fields) out[t.name] = null;
      for (const f of fields) {
        const value = source[f.name];
        if (value === null || value === undefined) continue;
        // A field the column does not have would be lost: the whole value is rescued instead.
        if (!f.convert) return MISFIT;
        const fitted = f.convert(value);
        if (fitted === MISFIT) return MISFIT;
        out[f.name] = fitted;
      }
      return out;
    };
  }
  return () => MISFIT;
}

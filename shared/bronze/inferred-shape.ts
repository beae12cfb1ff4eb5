import { arrayOf, type BronzeType, nameProblem, type PrimitiveType, structOf } from './delta-types.ts';
import { temporalOf } from './temporal-text.ts';
import { classifyNumber, DoubleLiteral, Unstorable } from './values.ts';

/**
 * The type inferred so far for one column (or nested field) of JSON and CSV values (docs/bronze.md, "JSON
 * and CSV"). `undefined` is nothing known yet (only nulls, or values without an exact type); `long!` a long
 * column one of whose values a double cannot hold, so it never widens to double. Structs and arrays are
 * merged in place: one shape per column, not one per record.
 */
export type Shape = undefined | PrimitiveType | 'long!' | StructShape | ArrayShape;
interface StructShape {
  readonly kind: 'struct';
  readonly fields: Map<string, Shape>;
}
interface ArrayShape {
  readonly kind: 'array';
  element: Shape;
}

const exactAsDouble = (v: bigint) => BigInt(Number(v)) === v;

/** A text's own type: a date or timestamp it spells exactly, none when inexact, else string. */
function textShape(text: string): Shape {
  const temporal = temporalOf(text);
  if (temporal === 'inexact') return undefined;
  return temporal ? (temporal.type as PrimitiveType) : 'string';
}

/** A CSV field's type: empty is null; numbers, booleans, dates and timestamps by their text. */
export function csvShape(text: string): Shape {
  if (text === '') return undefined;
  const n = classifyNumber(text);
  if (n?.kind === 'long') return typeof n.value === 'bigint' && !exactAsDouble(n.value) ? 'long!' : 'long';
  if (n) return n.kind === 'double' ? 'double' : undefined;
  if (text === 'true' || text === 'false') return 'boolean';
  return textShape(text);
}

/**
 * `shape` widened to also hold a JSON value. Objects and arrays are structs and arrays when `typed`, else
 * their JSON text (a string).
 */
export function mergeJson(shape: Shape, value: unknown, typed: boolean): Shape {
  if (value === null || value === undefined) return shape;
  switch (typeof value) {
    case 'string':
      return widen(shape, textShape(value));
    case 'boolean':
      return widen(shape, 'boolean');
    case 'number':
      return widen(shape, Number.isSafeInteger(value) ? 'long' : 'double');
    case 'bigint':
      return widen(shape, exactAsDouble(value) ? 'long' : 'long!');
  }
  if (value instanceof DoubleLiteral) return widen(shape, 'double');
  if (value instanceof Unstorable) return shape;
  if (!typed) return widen(shape, 'string');
  if (Array.isArray(value)) {
    if (shape === undefined) shape = { kind: 'array', element: undefined };
    if (typeof shape !== 'object' || shape.kind !== 'array') return 'string';
    for (const e of value) shape.element = mergeJson(shape.element, e, typed);
    return shape;
  }
  if (shape === undefined) shape = { kind: 'struct', fields: new Map() };
  if (typeof shape !== 'object' || shape.kind !== 'struct') return 'string';
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record))
    shape.fields.set(key, mergeJson(shape.fields.get(key), record[key], typed));
  return shape;
}

/**
 * Two shapes of one column: long and double widen to double unless a long is inexact as a double; struct
 * and array merge (into `a`); any other mix is string, which holds every value as its exact text.
 */
export function widen(a: Shape, b: Shape): Shape {
  if (a === undefined) return b;
  if (b === undefined || a === b) return a;
  if (typeof a === 'object' && typeof b === 'object') {
    if (a.kind === 'array' && b.kind === 'array') {
      a.element = widen(a.element, b.element);
      return a;
    }
    if (a.kind === 'struct' && b.kind === 'struct') {
      for (const [name, field] of b.fields) a.fields.set(name, widen(a.fields.get(name), field));
      return a;
    }
    return 'string';
  }
  const pair = new Set([a, b]);
  if (pair.size === 2 && pair.has('long') && pair.has('long!')) return 'long!';
  if (pair.has('double') && pair.has('long')) return 'double';
  return 'string';
}

/**
 * The Delta type of a shape. Nothing known is a string (it can hold anything later). In a struct the first
 * spelling of a field name wins, as for columns: a field differing from it only by case, or with a name
 * Delta cannot store, is left out (a value that has it is rescued whole). A struct left with no field (only
 * `{}` seen, or only such names) is a string of JSON text.
 */
export function shapeType(shape: Shape): BronzeType {
  if (shape === undefined) return 'string';
  if (shape === 'long!') return 'long';
  if (typeof shape === 'string') return shape;
  if (shape.kind === 'array') return arrayOf(shapeType(shape.element));
  const claimed = new Set<string>();
  const fields: Array<{ name: string; type: BronzeType }> = [];
  for (const [name, field] of shape.fields) {
    const lower = name.toLowerCase();
    if (claimed.has(lower)) continue;
    claimed.add(lower);
    if (nameProblem(name) === undefined) fields.push({ name, type: shapeType(field) });
  }
  return fields.length === 0 ? 'string' : structOf(fields);
}

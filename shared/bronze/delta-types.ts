import { InletError } from '../kernel/errors.ts';

/**
 * The Delta type model of a bronze table, one definition for schema inference, fitting, the Parquet writer,
 * the log and the checkpoint: the JSON form PROTOCOL.md "Schema Serialization Format" gives (a primitive
 * name, `decimal(p,s)`, or a struct / array / map object), so a `schemaString` is this model as JSON.
 */
export const PRIMITIVE_TYPES = [
  'string',
  'long',
  'integer',
  'short',
  'byte',
  'float',
  'double',
  'boolean',
  'binary',
  'date',
  'timestamp',
  'timestamp_ntz',
] as const;
export type PrimitiveType = (typeof PRIMITIVE_TYPES)[number];
/** `decimal(precision,scale)`, spelled as Spark writes it (no space); precision 1-38, scale 0-precision. */
export type DecimalType = `decimal(${number},${number})`;

export interface StructField {
  readonly name: string;
  readonly type: BronzeType;
  readonly nullable: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
}
export interface StructType {
  readonly type: 'struct';
  readonly fields: readonly StructField[];
}
export interface ArrayType {
  readonly type: 'array';
  readonly elementType: BronzeType;
  readonly containsNull: boolean;
}
export interface MapType {
  readonly type: 'map';
  readonly keyType: BronzeType;
  readonly valueType: BronzeType;
  readonly valueContainsNull: boolean;
}
export type BronzeType = PrimitiveType | DecimalType | StructType | ArrayType | MapType;

/** Delta's limit (PROTOCOL.md "Primitive Types": "The precision and scale can be up to 38"). */
export const MAX_DECIMAL_PRECISION = 38;

export const decimalType = (precision: number, scale: number): DecimalType =>
  `decimal(${precision},${scale})`;

const DECIMAL = /^decimal\((\d+),\s*(\d+)\)$/;

/** Precision and scale of a decimal type, undefined for any other type. */
export function decimalOf(type: BronzeType): { precision: number; scale: number } | undefined {
  if (typeof type !== 'string') return undefined;
  const m = DECIMAL.exec(type);
  return m ? { precision: Number(m[1]), scale: Number(m[2]) } : undefined;
}

/** Nested types are always nullable here: a bronze table records what arrived, nulls included. */
export const structOf = (fields: ReadonlyArray<{ name: string; type: BronzeType }>): StructType => ({
  type: 'struct',
  fields: fields.map((f) => ({ name: f.name, type: f.type, nullable: true, metadata: {} })),
});
export const arrayOf = (elementType: BronzeType): ArrayType => ({
  type: 'array',
  elementType,
  containsNull: true,
});
export const mapOf = (keyType: BronzeType, valueType: BronzeType): MapType => ({
  type: 'map',
  keyType,
  valueType,
  valueContainsNull: true,
});

/** Readable and unique: `long`, `decimal(10,2)`, `struct<a:long,b:array<string>>`, `map<string,date>`. */
export function typeText(type: BronzeType): string {
  if (typeof type === 'string') return type;
  switch (type.type) {
    case 'struct':
      return `struct<${type.fields.map((f) => `${f.name}:${typeText(f.type)}`).join(',')}>`;
    case 'array':
      return `array<${typeText(type.elementType)}>`;
    case 'map':
      return `map<${typeText(type.keyType)},${typeText(type.valueType)}>`;
  }
}

export const sameType = (a: BronzeType, b: BronzeType) => a === b || typeText(a) === typeText(b);

/** Whether a column of this type needs the `timestampNtz` table feature (PROTOCOL.md "TimestampNtz"). */
export function usesTimestampNtz(type: BronzeType): boolean {
  if (typeof type === 'string') return type === 'timestamp_ntz';
  switch (type.type) {
    case 'struct':
      return type.fields.some((f) => usesTimestampNtz(f.type));
    case 'array':
      return usesTimestampNtz(type.elementType);
    case 'map':
      return usesTimestampNtz(type.keyType) || usesTimestampNtz(type.valueType);
  }
}

/**
 * Why Delta cannot hold a column (or nested field) of this name, or undefined when it can. Without column
 * mapping, Delta refuses names with any of ` ,;{}()\n\t=` ("special characters in Parquet schema": Delta
 * Kernel's `SchemaUtils.validParquetColumnNames`, Spark's `checkFieldNames`), and names must be unique
 * regardless of case (PROTOCOL.md "Schema Serialization Format"), which the caller checks against its
 * siblings.
 */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'Delta cannot store an empty column name';
  if (/[ ,;{}()\n\t=]/.test(name)) return 'Delta cannot store a column name with any of " ,;{}()\\n\\t="';
  return undefined;
}

/** Why a struct's field names cannot be stored, recursively (bad characters, or two differing by case). */
export function fieldNamesProblem(type: BronzeType): string | undefined {
  if (typeof type === 'string') return undefined;
  if (type.type === 'array') return fieldNamesProblem(type.elementType);
  if (type.type === 'map') return fieldNamesProblem(type.keyType) ?? fieldNamesProblem(type.valueType);
  const seen = new Map<string, string>();
  for (const field of type.fields) {
    const bad = nameProblem(field.name);
    if (bad) return `struct field '${field.name}': ${bad}`;
    const twin = seen.get(field.name.toLowerCase());
    if (twin !== undefined)
      return `struct fields '${twin}' and '${field.name}' differ only by case (Delta names are case-insensitive)`;
    seen.set(field.name.toLowerCase(), field.name);
    const inner = fieldNamesProblem(field.type);
    if (inner) return inner;
  }
  return undefined;
}

const INTEGRAL_DIGITS: Partial<Record<string, number>> = { byte: 3, short: 5, integer: 10, long: 20 };
const INTEGRAL_ORDER: readonly BronzeType[] = ['byte', 'short', 'integer', 'long'];

/** Decimal digits an integral type may need (Delta "Type Widening": Int -> Decimal(10+k1,k2), Long -> 20). */
export const integralDigits = (type: BronzeType): number | undefined =>
  typeof type === 'string' ? INTEGRAL_DIGITS[type] : undefined;

/**
 * The type that holds every value of both exactly, or undefined when there is none (the caller keeps the
 * first type and rescues the misfits). Delta's type widening rules are the guide (PROTOCOL.md "Type
 * Widening"): byte -> short -> integer -> long; float -> double; byte/short/integer -> double; integral and
 * decimal into a decimal with enough digits on both sides of the point (at most 38). Not long -> double
 * (inexact past 2^53) and not date -> timestamp_ntz (a date is not a time of day). Structs merge field by
 * field (a field missing on one side is null there), arrays and maps element-wise.
 */
export function mergeTypes(a: BronzeType, b: BronzeType): BronzeType | undefined {
  if (sameType(a, b)) return a;
  if (typeof a === 'string' && typeof b === 'string') return mergePrimitive(a, b);
  if (typeof a === 'string' || typeof b === 'string' || a.type !== b.type) return undefined;
  if (a.type === 'array' && b.type === 'array') {
    const element = mergeTypes(a.elementType, b.elementType);
    return element && arrayOf(element);
  }
  if (a.type === 'map' && b.type === 'map') {
    const key = mergeTypes(a.keyType, b.keyType);
    const value = mergeTypes(a.valueType, b.valueType);
    return key && value && mapOf(key, value);
  }
  if (a.type === 'struct' && b.type === 'struct') return mergeStructs(a, b);
  return undefined;
}

function mergePrimitive(
  a: PrimitiveType | DecimalType,
  b: PrimitiveType | DecimalType,
): BronzeType | undefined {
  const ia = INTEGRAL_ORDER.indexOf(a);
  const ib = INTEGRAL_ORDER.indexOf(b);
  if (ia >= 0 && ib >= 0) return INTEGRAL_ORDER[Math.max(ia, ib)];
  const floats = new Set<BronzeType>(['float', 'double']);
  if (floats.has(a) && floats.has(b)) return 'double';
  const smallInt = (t: BronzeType) => t === 'byte' || t === 'short' || t === 'integer';
  if ((a === 'double' && smallInt(b)) || (b === 'double' && smallInt(a))) return 'double';
  const da = decimalOf(a) ?? digitsAsDecimal(a);
  const db = decimalOf(b) ?? digitsAsDecimal(b);
  if (!da || !db || (!decimalOf(a) && !decimalOf(b))) return undefined;
  const scale = Math.max(da.scale, db.scale);
  const precision = Math.max(da.precision - da.scale, db.precision - db.scale) + scale;
  return precision <= MAX_DECIMAL_PRECISION ? decimalType(precision, scale) : undefined;
}

function digitsAsDecimal(type: BronzeType): { precision: number; scale: number } | undefined {
  const digits = integralDigits(type);
  return digits === undefined ? undefined : { precision: digits, scale: 0 };
}

function mergeStructs(a: StructType, b: StructType): BronzeType | undefined {
  const fields = a.fields.map((f) => ({ name: f.name, type: f.type }));
  for (const field of b.fields) {
    const index = fields.findIndex((f) => f.name.toLowerCase() === field.name.toLowerCase());
    const twin = fields[index];
    if (!twin) {
      fields.push({ name: field.name, type: field.type });
      continue;
    }
    // `a` beside `A` in one struct would make the table unreadable.
    if (twin.name !== field.name) return undefined;
    const merged = mergeTypes(twin.type, field.type);
    if (!merged) return undefined;
    fields[index] = { name: twin.name, type: merged };
  }
  return structOf(fields);
}

/**
 * A type read from a `schemaString`: validated, so a log this sink cannot interpret fails with a clear
 * error instead of writing wrong files. Accepts `decimal(p, s)` with a space (PROTOCOL.md's own example).
 */
export function parseBronzeType(json: unknown, where = 'type'): BronzeType {
  const fail = (why: string): never => {
    throw new InletError(`Delta schema: ${where}: ${why}`, { retryable: false });
  };
  if (typeof json === 'string') {
    if ((PRIMITIVE_TYPES as readonly string[]).includes(json)) return json as PrimitiveType;
    const m = DECIMAL.exec(json);
    if (m) {
      const precision = Number(m[1]);
      const scale = Number(m[2]);
      if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision)
        fail(`'${json}' is not a valid decimal`);
      return decimalType(precision, scale);
    }
    return fail(`type '${json}' is not one this sink reads or writes`);
  }
  if (typeof json !== 'object' || json === null) return fail('not a type');
  const o = json as Record<string, unknown>;
  switch (o.type) {
    case 'struct': {
      if (!Array.isArray(o.fields)) return fail('struct without fields');
      return {
        type: 'struct',
        fields: (o.fields as Record<string, unknown>[]).map((f, i) => {
          if (typeof f?.name !== 'string') return fail(`field ${i} has no name`);
          return {
            name: f.name,
            type: parseBronzeType(f.type, `${where}.${f.name}`),
            nullable: f.nullable !== false,
            metadata: (f.metadata as Record<string, unknown> | undefined) ?? {},
          };
        }),
      };
    }
    case 'array':
      return {
        type: 'array',
        elementType: parseBronzeType(o.elementType, `${where}.element`),
        containsNull: o.containsNull !== false,
      };
    case 'map':
      return {
        type: 'map',
        keyType: parseBronzeType(o.keyType, `${where}.key`),
        valueType: parseBronzeType(o.valueType, `${where}.value`),
        valueContainsNull: o.valueContainsNull !== false,
      };
    default:
      return fail(`type ${JSON.stringify(o.type)} is not one this sink reads or writes`);
  }
}

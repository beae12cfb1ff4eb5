import type { SchemaElement } from 'hyparquet';
import { type BronzeType, decimalType, MAX_DECIMAL_PRECISION } from './delta-types.ts';
import {
  dateText,
  decimalText,
  doubleText,
  inInt64,
  timeOfDayText,
  timestampText,
  untypedJson,
} from './values.ts';

/**
 * How one Parquet field (a column, or a field inside one) becomes a Delta value; the primitive fields here,
 * groups in parquet-types.ts. Following what Spark's Parquet reader does (ParquetToSparkSchemaConverter) and
 * PROTOCOL.md "Delta Data Type to Parquet Type Mappings". Values come from hyparquet read raw
 * (parquet-records.ts): integers, days, timestamps in their unit, unscaled decimals, bytes; nothing rounded
 * on the way.
 */
export interface FieldReader {
  /** The Delta type; undefined when none holds this field (its values are rescued with their text). */
  readonly type: BronzeType | undefined;
  /** Why there is no type. */
  readonly problem?: string;
  /** A raw value as a cell of `type` (values.ts), or a Bad when this one value has no exact cell. */
  read(raw: unknown): unknown;
  /** The raw value's exact JSON (numbers as exact literals, instants as ISO-8601 with every digit). */
  json(raw: unknown): string;
}

/** One value that has no exact cell (a nanosecond, a decimal wider than declared, text that is not UTF-8). */
export class Bad {
  constructor(readonly reason: string) {}
}

/** A string parser's answer for bytes that are not UTF-8 (hyparquet would substitute U+FFFD). */
export class NotUtf8 {
  constructor(readonly bytes: Uint8Array) {}
}

export const isNull = (v: unknown) => v === null || v === undefined;
const base64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
export const q = (text: string) => JSON.stringify(text);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Big-endian two's complement bytes (Parquet DECIMAL on a byte array) as a bigint. */
export function unscaledOf(raw: unknown): bigint {
  if (typeof raw === 'bigint') return raw;
  if (typeof raw === 'number') return BigInt(raw);
  const bytes = raw as Uint8Array;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  if (bytes.length > 0 && (bytes[0] as number) & 0x80) value -= 1n << BigInt(8 * bytes.length);
  return value;
}

const leaf = (
  type: BronzeType | undefined,
  read: (raw: unknown) => unknown,
  json: (raw: unknown) => string,
  problem?: string,
): FieldReader => ({
  type,
  problem,
  read: (raw) => (isNull(raw) ? null : read(raw)),
  json: (raw) => (isNull(raw) ? 'null' : json(raw)),
});

const PER_SECOND = { MILLIS: 1_000n, MICROS: 1_000_000n, NANOS: 1_000_000_000n } as const;
type Unit = keyof typeof PER_SECOND;

function timestampReader(unit: Unit, utc: boolean): FieldReader {
  const perSecond = PER_SECOND[unit];
  return leaf(
    utc ? 'timestamp' : 'timestamp_ntz',
    (raw) => {
      const units = BigInt(raw as bigint);
      if (unit === 'NANOS' && units % 1000n !== 0n)
        return new Bad('sub-microsecond digits: Delta timestamps hold microseconds');
      const micros = unit === 'MILLIS' ? units * 1000n : unit === 'MICROS' ? units : units / 1000n;
      return inInt64(micros) ? micros : new Bad('beyond the range of a Delta timestamp');
    },
    (raw) => q(timestampText(BigInt(raw as bigint), perSecond, utc)),
  );
}

function decimalReader(precision: number, scale: number): FieldReader {
  const json = (raw: unknown) => decimalText(unscaledOf(raw), scale);
  if (precision > MAX_DECIMAL_PRECISION || precision < 1 || scale < 0 || scale > precision)
    return leaf(
      undefined,
      () => null,
      json,
      `decimal(${precision},${scale}) has no Delta type (at most 38 digits)`,
    );
  const limit = 10n ** BigInt(precision);
  return leaf(
    decimalType(precision, scale),
    (raw) => {
      const v = unscaledOf(raw);
      return v > -limit && v < limit
        ? v
        : new Bad(`more digits than its declared decimal(${precision},${scale})`);
    },
    json,
  );
}

const stringReader = leaf(
  'string',
  (raw) => {
    if (typeof raw === 'string') return raw;
    if (raw instanceof NotUtf8) return new Bad('text that is not UTF-8 (kept as base64)');
    try {
      return utf8.decode(raw as Uint8Array);
    } catch {
      return new Bad('text that is not UTF-8 (kept as base64)');
    }
  },
  (raw) => {
    if (typeof raw === 'string') return q(raw);
    const bytes = raw instanceof NotUtf8 ? raw.bytes : (raw as Uint8Array);
    try {
      return q(utf8.decode(bytes));
    } catch {
      return q(base64(bytes));
    }
  },
);
const binaryReader = leaf(
  'binary',
  (raw) => raw,
  (raw) => q(base64(raw as Uint8Array)),
);
const floatJson = (raw: unknown) => {
  const v = raw as number;
  return Number.isFinite(v) ? doubleText(v) : q(String(v));
};
const numberJson = (raw: unknown) => String(raw);

function intReader(bits: number, signed: boolean, physical: 'INT32' | 'INT64'): FieldReader {
  if (physical === 'INT64') {
    // hyparquet reads UINT_64 as unsigned already; it needs 20 digits (Spark: decimal(20,0)).
    if (!signed || bits !== 64) return leaf(decimalType(20, 0), (raw) => BigInt(raw as bigint), numberJson);
    return leaf('long', (raw) => raw, numberJson);
  }
  if (!signed) {
    // Spark's mapping: UINT_8 -> short, UINT_16 -> integer, UINT_32 -> long (hyparquet reads it unsigned).
    if (bits === 32) return leaf('long', (raw) => BigInt(raw as number), numberJson);
    return leaf(bits === 8 ? 'short' : 'integer', (raw) => raw, numberJson);
  }
  const type: BronzeType = bits === 8 ? 'byte' : bits === 16 ? 'short' : 'integer';
  const limit = 2 ** (bits - 1);
  return leaf(
    type,
    (raw) => {
      const v = raw as number;
      return v >= -limit && v < limit ? v : new Bad(`outside the range of INT(${bits})`);
    },
    numberJson,
  );
}

function timeReader(unit: Unit): FieldReader {
  const text = (raw: unknown) => timeOfDayText(BigInt(raw as number | bigint), PER_SECOND[unit]);
  // Delta has no time-of-day type: the exact text, as a string column.
  return leaf('string', text, (raw) => q(text(raw)));
}

function intervalJson(raw: unknown): string {
  const b = raw as Uint8Array;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u32 = (at: number) => (b.byteLength >= at + 4 ? view.getUint32(at, true) : 0);
  return `{"months":${u32(0)},"days":${u32(4)},"milliseconds":${u32(8)}}`;
}

/** Raw JSON for what hyparquet assembles of a layout this reader does not map (kept, never dropped). */
export function rawJson(raw: unknown): string {
  if (raw instanceof Uint8Array) return q(base64(raw));
  if (raw instanceof NotUtf8) return q(base64(raw.bytes));
  return untypedJson(raw);
}

export function primitiveReader(e: SchemaElement): FieldReader {
  const logical = e.logical_type;
  const converted = e.converted_type;
  if (logical?.type === 'DECIMAL') return decimalReader(logical.precision, logical.scale);
  if (converted === 'DECIMAL') return decimalReader(e.precision ?? 0, e.scale ?? 0);
  if (logical?.type === 'TIMESTAMP') return timestampReader(logical.unit, logical.isAdjustedToUTC);
  if (converted === 'TIMESTAMP_MILLIS') return timestampReader('MILLIS', true);
  if (converted === 'TIMESTAMP_MICROS') return timestampReader('MICROS', true);
  if (logical?.type === 'TIME') return timeReader(logical.unit);
  if (converted === 'TIME_MILLIS') return timeReader('MILLIS');
  if (converted === 'TIME_MICROS') return timeReader('MICROS');
  if (logical?.type === 'DATE' || converted === 'DATE')
    return leaf(
      'date',
      (raw) => raw,
      (raw) => q(dateText(raw as number)),
    );
  if (logical?.type === 'NULL')
    return leaf(
      'string',
      () => null,
      () => 'null',
    );
  switch (e.type) {
    case 'BOOLEAN':
      return leaf('boolean', (raw) => raw, numberJson);
    case 'INT32':
    case 'INT64': {
      if (logical?.type === 'INTEGER') return intReader(logical.bitWidth, logical.isSigned, e.type);
      const m = /^(U?)INT_(8|16|32|64)$/.exec(converted ?? '');
      if (m) return intReader(Number(m[2]), m[1] === '', e.type);
      return e.type === 'INT32'
        ? leaf('integer', (raw) => raw, numberJson)
        : leaf('long', (raw) => raw, numberJson);
    }
    case 'INT96':
      // Spark and Hive's legacy instant: hyparquet gives nanoseconds since the epoch, UTC.
      return timestampReader('NANOS', true);
    case 'FLOAT':
      return leaf('float', (raw) => raw, floatJson);
    case 'DOUBLE':
      return leaf('double', (raw) => raw, floatJson);
  }
  if (logical?.type === 'FLOAT16') return leaf('float', (raw) => raw, floatJson);
  if (logical?.type === 'UUID')
    return leaf(
      'string',
      (raw) => raw,
      (raw) => q(raw as string),
    );
  if (logical?.type === 'INTERVAL' || converted === 'INTERVAL')
    return leaf(undefined, () => null, intervalJson, 'Parquet INTERVAL has no Delta type');
  const text =
    logical?.type === 'STRING' ||
    logical?.type === 'ENUM' ||
    logical?.type === 'JSON' ||
    converted === 'UTF8' ||
    converted === 'ENUM' ||
    converted === 'JSON';
  // Plain BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY, BSON, WKB geometry: bytes (Spark reads them as binary).
  return text ? stringReader : binaryReader;
}

import type { BronzeType } from './delta-types.ts';

/**
 * Dates and timestamps in JSON strings and CSV fields (docs/bronze.md, "JSON and CSV"). The formats are
 * Spark's defaults for JSON and CSV inference (`dateFormat` `yyyy-MM-dd`, `timestampFormat`
 * `yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]`, `timestampNTZFormat` without the offset), read strictly:
 * - `YYYY-MM-DD` -> `date` (days since 1970-01-01);
 * - `YYYY-MM-DDTHH:MM:SS[.f{1,9}]` then `Z` or `±HH:MM` (at most 18:00) -> `timestamp`, the instant in UTC
 *   microseconds (the offset itself is not kept: Delta's `timestamp` is an instant);
 * - the same without an offset -> `timestamp_ntz`, the wall clock (no zone is assumed for it).
 * A value with non-zero digits past the microsecond, or outside years 0001-9999 (Delta's range: PROTOCOL.md
 * "Primitive Types"), is `inexact`: no Delta type holds it, so it is rescued (or kept as text in a string
 * column), never truncated.
 */
export type Temporal = { readonly type: BronzeType; readonly cell: number | bigint };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?$/;
const FIRST_DAY = -719_162; // 0001-01-01
const LAST_DAY = 2_932_896; // 9999-12-31
const MICROS_PER_DAY = 86_400_000_000n;

/** Howard Hinnant's days_from_civil: exact for any proleptic Gregorian date. */
function daysFromCivil(y: number, m: number, d: number): number {
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yoe = year - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days since the epoch of a valid calendar date, else undefined (`2023-02-29`, month 13). */
function dayOf(y: string, m: string, d: string): number | undefined {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return undefined;
  const last = month === 2 && leap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  return day > last ? undefined : daysFromCivil(year, month, day);
}

/** The date or timestamp a text spells, `inexact` when no Delta type holds it exactly, else undefined. */
export function temporalOf(text: string): Temporal | 'inexact' | undefined {
  // Cheap refusal of most text: every form starts `dddd-`.
  if (text.length < 10 || text.charCodeAt(4) !== 45 /* - */) return undefined;
  const date = DATE.exec(text);
  if (date) {
    const day = dayOf(date[1] as string, date[2] as string, date[3] as string);
    if (day === undefined) return undefined;
    return day < FIRST_DAY || day > LAST_DAY ? 'inexact' : { type: 'date', cell: day };
  }
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zone] = m as unknown as string[];
  const day = dayOf(y as string, mo as string, d as string);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (day === undefined || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== undefined && zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (om > 59 || oh * 60 + om > 18 * 60) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const digits = fraction.padEnd(9, '0');
  if (!/^0*$/.test(digits.slice(6))) return 'inexact';
  const wall =
    BigInt(day) * MICROS_PER_DAY +
    BigInt(((hour * 60 + minute) * 60 + second) * 1_000_000 + Number(digits.slice(0, 6)));
  const micros = wall - BigInt(offsetMinutes) * 60_000_000n;
  const first = BigInt(FIRST_DAY) * MICROS_PER_DAY;
  const end = BigInt(LAST_DAY + 1) * MICROS_PER_DAY;
  if (micros < first || micros >= end) return 'inexact';
  return { type: zone === undefined ? 'timestamp_ntz' : 'timestamp', cell: micros };
}

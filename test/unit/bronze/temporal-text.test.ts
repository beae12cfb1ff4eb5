import { describe, expect, it } from 'vitest';
import { temporalOf } from '../../../shared/bronze/temporal-text.ts';
import { dateText, timestampText } from '../../../shared/bronze/values.ts';

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

describe('ISO-8601 dates and timestamps in JSON strings and CSV fields', () => {
  it('YYYY-MM-DD is a date (days since 1970-01-01)', () => {
    expect(temporalOf('1970-01-01')).toEqual({ type: 'date', cell: 0 });
    expect(temporalOf('2024-02-29')).toEqual({ type: 'date', cell: 19782 });
    expect(temporalOf('0001-01-01')).toEqual({ type: 'date', cell: -719162 });
    expect(temporalOf('9999-12-31')).toEqual({ type: 'date', cell: 2932896 });
  });

  it('a timestamp with Z or an offset is a timestamp: the instant in UTC microseconds', () => {
    expect(temporalOf('2024-01-02T03:04:05Z')).toEqual({
      type: 'timestamp',
      cell: micros('2024-01-02T03:04:05Z'),
    });
    expect(temporalOf('2024-01-02T03:04:05.123456+01:30')).toEqual({
      type: 'timestamp',
      cell: micros('2024-01-02T01:34:05Z') + 123456n,
    });
    expect(temporalOf('2024-01-02T03:04:05.5-05:00')).toEqual({
      type: 'timestamp',
      cell: micros('2024-01-02T08:04:05.500Z'),
    });
    // Zeros past the microsecond hold nothing: the same instant.
    expect(temporalOf('2024-01-02T03:04:05.123456000Z')).toEqual({
      type: 'timestamp',
      cell: micros('2024-01-02T03:04:05Z') + 123456n,
    });
  });

  it('a timestamp without an offset is a timestamp_ntz: the wall clock, no zone assumed', () => {
    expect(temporalOf('2024-01-02T03:04:05.000001')).toEqual({
      type: 'timestamp_ntz',
      cell: micros('2024-01-02T03:04:05Z') + 1n,
    });
    expect(temporalOf('1969-12-31T23:59:59.999999')).toEqual({ type: 'timestamp_ntz', cell: -1n });
  });

  it('prints back as the text the sink writes for these types', () => {
    for (const text of ['2024-01-02T03:04:05.123456Z', '0001-01-01T00:00:00.000000Z']) {
      const t = temporalOf(text);
      expect(t !== undefined && t !== 'inexact' && timestampText(t.cell as bigint, 1_000_000n, true)).toBe(
        text,
      );
    }
    const d = temporalOf('1900-03-01');
    expect(d !== undefined && d !== 'inexact' && dateText(d.cell as number)).toBe('1900-03-01');
  });

  it('sub-microsecond digits or a value outside years 0001-9999 have no exact type: inexact, never truncated', () => {
    for (const text of [
      '2024-01-02T03:04:05.1234567Z',
      '2024-01-02T03:04:05.123456789',
      '0000-12-31',
      '0001-01-01T00:00:00+00:01',
      '9999-12-31T23:59:59-00:01',
    ])
      expect(temporalOf(text), text).toBe('inexact');
  });

  it('anything else is not a date or a timestamp', () => {
    for (const text of [
      '2024-1-02',
      '2024-02-30',
      '2023-02-29',
      '2024-13-01',
      '2024-01-02 03:04:05',
      '2024-01-02T03:04',
      '2024-01-02T24:00:00',
      '2024-01-02T23:59:60Z',
      '2024-01-02T03:04:05+0100',
      '2024-01-02T03:04:05+19:00',
      '2024-01-02T03:04:05z',
      '2024-01-02T03:04:05.Z',
      '+12024-01-02',
      ' 2024-01-02',
      '2024-01-02\n',
      'hello',
    ])
      expect(temporalOf(text), text).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { decimalType, structOf } from '../../../shared/bronze/delta-types.ts';
import {
  compareCodePoints,
  FileStatsCollector,
  INDEXED_LEAVES,
  STRING_PREFIX,
  truncateMax,
  truncateMin,
} from '../../../shared/bronze/file-stats.ts';
import type { OutputRow } from '../../../shared/bronze/fit-record.ts';
import { allColumns, type Column } from '../../../shared/bronze/schema.ts';

const statsOf = (columns: readonly Column[], rows: readonly OutputRow[], limit?: number) => {
  const c = new FileStatsCollector(columns, limit);
  for (const row of rows) c.add(row);
  return JSON.parse(c.json()) as {
    numRecords: number;
    minValues: Record<string, unknown>;
    maxValues: Record<string, unknown>;
    nullCount: Record<string, unknown>;
  };
};

describe('string order and truncation', () => {
  it('orders by code point (UTF-8 bytes), not by UTF-16 unit', () => {
    // U+FF21 is one UTF-16 unit above the surrogates of U+1F600, but below it as a code point.
    expect('\u{1F600}' < '\uFF21').toBe(true);
    expect(compareCodePoints('\u{1F600}', '\uFF21')).toBeGreaterThan(0);
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('x', 'x')).toBe(0);
  });

  it('keeps a string up to the prefix as it is, and cuts a longer minimum to the prefix', () => {
    const exact = 'a'.repeat(STRING_PREFIX);
    expect(truncateMin(exact)).toBe(exact);
    expect(truncateMax(exact)).toBe(exact);
    expect(truncateMin(`${exact}zzz`)).toBe(exact);
  });

  it('never splits a surrogate pair', () => {
    const s = `${'a'.repeat(STRING_PREFIX - 1)}\u{1F600}tail`;
    expect(truncateMin(s)).toBe(`${'a'.repeat(STRING_PREFIX - 1)}\u{1F600}`);
  });

  it('cuts a maximum to the prefix plus a greater character, so it stays an upper bound', () => {
    const head = 'b'.repeat(STRING_PREFIX);
    expect(truncateMax(`${head}zzz`)).toBe(`${head}\x7f`);
    expect(truncateMax(`${head}\u00e9z`)).toBe(`${head}\u{10FFFF}`);
    expect(truncateMax(`${head}\x7fz`)).toBe(`${head}\u{10FFFF}`);
    // A cut at U+10FFFF itself moves past it; past twice the prefix there is no bound.
    expect(truncateMax(`${head}\u{10FFFF}a`)).toBe(`${head}\u{10FFFF}\x7f`);
    expect(truncateMax(`${head}${'\u{10FFFF}'.repeat(STRING_PREFIX)}a`)).toBeUndefined();
    for (const s of [`${head}zzz`, `${head}\u00e9z`, `${head}\u{10FFFF}a`, `${head}\u{1F600}`]) {
      const max = truncateMax(s) as string;
      expect(compareCodePoints(max, s)).toBeGreaterThanOrEqual(0);
      expect(max.length).toBeLessThanOrEqual(2 * STRING_PREFIX + 2);
    }
  });
});

describe('FileStatsCollector', () => {
  it('writes numRecords, bounds and null counts of every column, system columns included', () => {
    const columns = allColumns([
      { name: 'id', type: 'long' },
      { name: 'name', type: 'string' },
    ]);
    const rows = [
      { id: 5, name: 'b', _rescued_data: null, _source_file: 's3://l/a', _manifest_version: 3 },
      { id: -2, name: null, _rescued_data: '{"x":1}', _source_file: 's3://l/a', _manifest_version: 3 },
      {
        id: 9223372036854775807n,
        name: 'a',
        _rescued_data: null,
        _source_file: 's3://l/b',
        _manifest_version: 3,
      },
    ];
    const c = new FileStatsCollector(columns);
    for (const row of rows) c.add(row);
    // The long past 2^53 is written with every digit.
    expect(c.json()).toContain('"id":9223372036854775807');
    expect(statsOf(columns, rows)).toEqual({
      numRecords: 3,
      minValues: {
        id: -2,
        name: 'a',
        _rescued_data: '{"x":1}',
        _source_file: 's3://l/a',
        _manifest_version: 3,
      },
      maxValues: {
        id: 9223372036854776000,
        name: 'b',
        _rescued_data: '{"x":1}',
        _source_file: 's3://l/b',
        _manifest_version: 3,
      },
      nullCount: { id: 0, name: 1, _rescued_data: 2, _source_file: 0, _manifest_version: 0 },
    });
  });

  it('leaves out bounds of a column only ever null, and keeps its null count', () => {
    const s = statsOf([{ name: 'x', type: 'double' }], [{ x: null }, { x: null }]);
    expect(s).toEqual({ numRecords: 2, minValues: {}, maxValues: {}, nullCount: { x: 2 } });
  });

  it('rounds timestamp bounds to milliseconds outward: the minimum down, the maximum up', () => {
    const columns: Column[] = [
      { name: 'ts', type: 'timestamp' },
      { name: 'ntz', type: 'timestamp_ntz' },
    ];
    const s = statsOf(columns, [
      { ts: 1_704_164_645_123_456n, ntz: 1_704_164_645_123_000n },
      { ts: 1_704_164_645_999_001n, ntz: -1n },
    ]);
    expect(s.minValues).toEqual({ ts: '2024-01-02T03:04:05.123Z', ntz: '1969-12-31T23:59:59.999' });
    // .999001 rounds up into the next second; an exact millisecond stays as it is.
    expect(s.maxValues).toEqual({ ts: '2024-01-02T03:04:06.000Z', ntz: '2024-01-02T03:04:05.123' });
  });

  it('writes dates, decimals with their scale and floats as stored', () => {
    const s = statsOf(
      [
        { name: 'd', type: 'date' },
        { name: 'amount', type: decimalType(38, 2) },
        { name: 'f', type: 'float' },
      ],
      [
        { d: 19_724, amount: 12_345_678_901_234_567_890_123_456_789_012_345_678n, f: 0.1 },
        { d: -1, amount: -150n, f: -2.5 },
      ],
    );
    expect(s.minValues).toEqual({ d: '1969-12-31', amount: -1.5, f: -2.5 });
    expect(s.maxValues).toEqual({
      d: '2024-01-02',
      amount: Number('123456789012345678901234567890123456.78'),
      f: Math.fround(0.1),
    });
    const c = new FileStatsCollector([{ name: 'amount', type: decimalType(38, 2) }]);
    c.add({ amount: 12_345_678_901_234_567_890_123_456_789_012_345_678n });
    c.add({ amount: -150n });
    expect(c.json()).toContain('"minValues":{"amount":-1.50}');
    expect(c.json()).toContain('"maxValues":{"amount":123456789012345678901234567890123456.78}');
  });

  it('writes no bounds where JSON or readers cannot hold them: NaN, infinities, booleans, binary, arrays, maps, lone surrogates, years past 9999', () => {
    const s = statsOf(
      [
        { name: 'nan', type: 'double' },
        { name: 'inf', type: 'float' },
        { name: 'b', type: 'boolean' },
        { name: 'bin', type: 'binary' },
        { name: 'arr', type: { type: 'array', elementType: 'long', containsNull: true } },
        { name: 'lone', type: 'string' },
        { name: 'far', type: 'date' },
      ],
      [
        { nan: 1, inf: 1, b: true, bin: new Uint8Array([1]), arr: [1], lone: 'a', far: 1 },
        {
          nan: Number.NaN,
          inf: Number.NEGATIVE_INFINITY,
          b: null,
          bin: null,
          arr: null,
          lone: '\uD800',
          far: 3_000_000,
        },
      ],
    );
    expect(s.minValues).toEqual({});
    expect(s.maxValues).toEqual({});
    expect(s.nullCount).toEqual({ nan: 0, inf: 0, b: 1, bin: 1, arr: 1, lone: 0, far: 0 });
  });

  it('mirrors structs, counting a field null where its struct is null', () => {
    const s = statsOf(
      [
        {
          name: 'a',
          type: structOf([
            { name: 'b', type: structOf([{ name: 'c', type: 'long' }]) },
            { name: 'n', type: 'string' },
          ]),
        },
      ],
      [
        { a: { b: { c: 4 }, n: 'x' } },
        { a: null },
        { a: { b: null, n: null } },
        { a: { b: { c: 1 }, n: 'y' } },
      ],
    );
    expect(s.minValues).toEqual({ a: { b: { c: 1 }, n: 'x' } });
    expect(s.maxValues).toEqual({ a: { b: { c: 4 }, n: 'y' } });
    expect(s.nullCount).toEqual({ a: { b: { c: 2 }, n: 2 } });
  });

  it('covers the first 32 leaf columns in schema order, struct fields counting one each', () => {
    expect(INDEXED_LEAVES).toBe(32);
    const columns: Column[] = [
      {
        name: 's',
        type: structOf(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, type: 'long' as const }))),
      },
      { name: 'x', type: 'long' },
      { name: 'y', type: 'long' },
      { name: 'z', type: 'long' },
    ];
    const row: OutputRow = {
      s: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, i])),
      x: 1,
      y: 2,
      z: 3,
    };
    const s = statsOf(columns, [row]);
    expect(Object.keys(s.nullCount)).toEqual(['s', 'x', 'y']);
    expect(Object.keys(s.maxValues.s as object)).toHaveLength(30);
    expect(s.maxValues).toMatchObject({ x: 1, y: 2 });
  });

  it('bounds every value it saw: a random file of strings', () => {
    const alphabet = ['a', 'z', '\x7f', '\u00e9', '\uFF21', '\u{1F600}', '\u{10FFFF}'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (let file = 0; file < 50; file++) {
      const values = Array.from({ length: 20 }, () =>
        Array.from({ length: next() % 80 }, () => alphabet[next() % alphabet.length]).join(''),
      );
      const s = statsOf(
        [{ name: 's', type: 'string' }],
        values.map((v) => ({ s: v })),
      );
      for (const v of values) {
        expect(compareCodePoints(s.minValues.s as string, v)).toBeLessThanOrEqual(0);
        if (s.maxValues.s !== undefined)
          expect(compareCodePoints(s.maxValues.s as string, v)).toBeGreaterThanOrEqual(0);
      }
    }
  });
});

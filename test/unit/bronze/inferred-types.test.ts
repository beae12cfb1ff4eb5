import { describe, expect, it } from 'vitest';
import { arrayOf, structOf } from '../../../shared/bronze/delta-types.ts';
import { memoryTable } from './table-io.ts';

const lines = (...records: readonly string[]) => records.map((r) => `${r}\n`).join('');
const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

describe('JSON and CSV inference recognises dates and timestamps (Auto Loader cloudFiles.inferColumnTypes)', () => {
  it('JSON strings: YYYY-MM-DD is a date, with an offset a timestamp, without one a timestamp_ntz', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines(
        '{"day":"2024-02-29","at":"2024-01-02T03:04:05.123456Z","local":"2024-01-02T03:04:05"}',
        '{"day":"0001-01-01","at":"2024-01-02T03:04:05+02:00","local":"1969-12-31T23:59:59.999999"}',
      ),
    });
    expect(t.schema).toEqual([
      { name: 'day', type: 'date' },
      { name: 'at', type: 'timestamp' },
      { name: 'local', type: 'timestamp_ntz' },
    ]);
    expect((await t.cells()).map((r) => [r.day, r.at, r.local, r._rescued_data])).toEqual([
      [19782, micros('2024-01-02T03:04:05Z') + 123456n, micros('2024-01-02T03:04:05Z'), null],
      [-719162, micros('2024-01-02T01:04:05Z'), -1n, null],
    ]);
    // timestamp_ntz needs its table feature (PROTOCOL.md "Timestamp without timezone").
    expect(t.actions(0)[1]?.protocol).toMatchObject({ readerFeatures: ['timestampNtz'] });
  });

  it("the add's stats bound inferred timestamps and dates as Spark writes them, struct fields as leaves", async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines(
        '{"at":"2024-01-02T03:04:05.123456Z","day":"2024-01-02","u":{"n":1,"local":"2024-01-02T03:04:05.000001"}}',
        '{"at":"2024-01-02T01:00:00+05:00","day":"2023-12-31","u":{"n":7}}',
      ),
    });
    const add = t.actions(0).find((a) => a.add)?.add as { stats: string };
    const stats = JSON.parse(add.stats);
    // Milliseconds, the maximum rounded up (PROTOCOL.md "Per-file Statistics").
    expect(stats.minValues).toMatchObject({
      at: '2024-01-01T20:00:00.000Z',
      day: '2023-12-31',
      u: { n: 1, local: '2024-01-02T03:04:05.000' },
    });
    expect(stats.maxValues).toMatchObject({
      at: '2024-01-02T03:04:05.124Z',
      day: '2024-01-02',
      u: { n: 7, local: '2024-01-02T03:04:05.001' },
    });
    expect(stats.nullCount).toMatchObject({ at: 0, day: 0, u: { n: 0, local: 1 } });
  });

  it('CSV fields follow the same rules', async () => {
    const t = memoryTable({ format: 'csv' });
    await t.write({ 'a.csv': 'day,at\n2024-01-02,2024-01-02T03:04:05Z\n,2024-01-02T03:04:05.5-01:00\n' });
    expect(t.schema).toEqual([
      { name: 'day', type: 'date' },
      { name: 'at', type: 'timestamp' },
    ]);
    expect((await t.cells()).map((r) => [r.day, r.at])).toEqual([
      [19724, micros('2024-01-02T03:04:05Z')],
      [null, micros('2024-01-02T04:04:05.5Z')],
    ]);
  });

  it('a timestamp with sub-microsecond digits or out of range is rescued as its exact text, never truncated', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines(
        '{"at":"2024-01-02T03:04:05Z"}',
        '{"at":"2024-01-02T03:04:05.123456789Z"}',
        '{"at":"0001-01-01T00:00:00+01:00"}',
      ),
    });
    expect(t.schema).toEqual([{ name: 'at', type: 'timestamp' }]);
    const rescued = await t.rescued();
    expect(rescued[1]).toMatchObject({ at: '2024-01-02T03:04:05.123456789Z' });
    expect(rescued[2]).toMatchObject({ at: '0001-01-01T00:00:00+01:00' });
  });

  it('a column of only such values, or of dates mixed with timestamps or text, is a string column', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines(
        '{"nanos":"2024-01-02T03:04:05.123456789Z","mixed":"2024-01-02","text":"2024-01-02"}',
        '{"nanos":null,"mixed":"2024-01-02T00:00:00","text":"soon"}',
      ),
    });
    expect(t.schema?.map((c) => c.type)).toEqual(['string', 'string', 'string']);
    expect((await t.rows()).map((r) => [r.nanos, r.mixed, r.text])).toEqual([
      ['2024-01-02T03:04:05.123456789Z', '2024-01-02', '2024-01-02'],
      [null, '2024-01-02T00:00:00', 'soon'],
    ]);
  });

  it('a later version keeps the type: a value of another type is rescued, not widened', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': lines('{"day":"2024-01-02","n":1}') });
    await t.write({ 'b.json': lines('{"day":"2024-01-02T00:00:00Z","n":2.5}') });
    expect(t.schema).toEqual([
      { name: 'day', type: 'date' },
      { name: 'n', type: 'long' },
    ]);
    expect((await t.rescued())[0]).toMatchObject({
      day: '2024-01-02T00:00:00Z',
      n: 2.5,
      _reasons: { day: "does not fit the column's type date", n: "does not fit the column's type long" },
    });
    // No type change, so no typeWidening feature (PROTOCOL.md "Type Widening").
    expect(JSON.stringify(t.actions(1))).not.toContain('typeWidening');
  });
});

describe('JSON objects and arrays become struct and array columns', () => {
  it('infers fields over every record, in first-seen order, and writes nested values exactly', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines(
        '{"user":{"id":1,"tags":["a"]},"points":[1,2]}',
        '{"user":{"id":2,"since":"2024-01-02","tags":[]},"points":[]}',
        '{"user":{"tags":null},"points":[3,null,4.5]}',
      ),
    });
    expect(t.schema).toEqual([
      {
        name: 'user',
        type: structOf([
          { name: 'id', type: 'long' },
          { name: 'tags', type: arrayOf('string') },
          { name: 'since', type: 'date' },
        ]),
      },
      { name: 'points', type: arrayOf('double') },
    ]);
    expect((await t.cells()).map((r) => [r.user, r.points, r._rescued_data])).toEqual([
      [{ id: 1n, tags: ['a'], since: null }, [1, 2], null],
      [{ id: 2n, tags: [], since: 19724 }, [], null],
      [{ id: null, tags: null, since: null }, [3, null, 4.5], null],
    ]);
  });

  it('an object where another record has text is JSON text; keys Delta cannot store are left out of a struct', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': lines('{"a":{"x":1},"b":{"k":1,"K":2},"c":{"ok":{"bad key":1}}}', '{"a":"plain"}'),
    });
    expect(t.schema).toEqual([
      { name: 'a', type: 'string' },
      // The first spelling is the field (as for columns); a value with its case twin is rescued whole.
      { name: 'b', type: structOf([{ name: 'k', type: 'long' }]) },
      { name: 'c', type: structOf([{ name: 'ok', type: 'string' }]) },
    ]);
    expect((await t.rows()).map((r) => [r.a, r.b ?? null, r.c ?? null])).toEqual([
      ['{"x":1}', null, { ok: '{"bad key":1}' }],
      ['plain', null, null],
    ]);
    expect((await t.rescued())[0]).toMatchObject({ b: { k: 1, K: 2 } });
  });

  it('nested jsonText keeps objects and arrays as their JSON text, every number exact', async () => {
    const t = memoryTable({ format: 'jsonl', nested: 'jsonText' });
    await t.write({ 'a.json': lines('{"a":{"x":9007199254740993,"y":[1.0]}}') });
    expect(t.schema).toEqual([{ name: 'a', type: 'string' }]);
    expect((await t.rows())[0]?.a).toBe('{"x":9007199254740993,"y":[1.0]}');
  });

  it("a table's existing string column keeps taking objects as their JSON text", async () => {
    // Tables written before struct inference have string columns holding JSON text: they stay so.
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': lines('{"a":"text"}') });
    await t.write({ 'b.json': lines('{"a":{"x":2,"y":[true]}}') });
    expect(t.schema).toEqual([{ name: 'a', type: 'string' }]);
    expect((await t.rows())[0]?.a).toBe('{"x":2,"y":[true]}');
  });

  it('a new field inside a struct is a schema change like a new column (addNewColumns)', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': lines('{"u":{"id":1}}') });
    await t.write({ 'b.json': lines('{"u":{"id":2,"name":"bo","ID":3}}', '{"u":{"id":3}}') });
    expect(t.schema).toEqual([
      {
        name: 'u',
        type: structOf([
          { name: 'id', type: 'long' },
          { name: 'name', type: 'string' },
        ]),
      },
    ]);
    // `ID` differs from the field `id` only by case: it is never a field, the value is rescued whole.
    const cells = await t.cells();
    expect(cells.map((r) => r.u)).toEqual([null, { id: 3n, name: null }]);
    expect((await t.rescued())[0]).toMatchObject({ u: { id: 2, name: 'bo', ID: 3 } });
  });

  it('failOnNewColumns stops at a new struct field, naming it; rescue keeps the whole value out', async () => {
    const failing = memoryTable({ format: 'jsonl', evolution: 'failOnNewColumns' });
    await failing.write({ 'a.json': lines('{"u":{"id":1}}') });
    await expect(failing.write({ 'b.json': lines('{"u":{"id":2,"name":"bo"}}') })).rejects.toThrow(
      /new columns u\.name/,
    );
    const rescuing = memoryTable({ format: 'jsonl', evolution: 'rescue' });
    await rescuing.write({ 'a.json': lines('{"u":{"id":1}}') });
    await rescuing.write({ 'b.json': lines('{"u":{"id":2,"name":"bo"}}') });
    expect(rescuing.schema).toEqual([{ name: 'u', type: structOf([{ name: 'id', type: 'long' }]) }]);
    expect((await rescuing.rescued())[0]).toMatchObject({ u: { id: 2, name: 'bo' } });
  });
});

describe('schemaHints of every Delta type fit JSON and CSV values exactly, or rescue them', () => {
  it('decimal, integer, short, byte, float: a number fits when the type holds it exactly', async () => {
    const t = memoryTable({
      format: 'jsonl',
      schemaHints: { d: 'decimal(20,2)', i: 'int', s: 'smallint', b: 'tinyint', f: 'float' },
    });
    await t.write({
      'a.json': lines(
        '{"d":12345678901234567.89,"i":2147483647,"s":-32768,"b":127,"f":0.1}',
        '{"d":1.5,"i":2.0,"s":1e2,"b":-128,"f":16777216}',
        '{"d":0.001,"i":2147483648,"s":32768,"b":128,"f":16777217}',
      ),
    });
    expect(t.schema?.map((c) => c.type)).toEqual(['decimal(20,2)', 'integer', 'short', 'byte', 'float']);
    const cells = await t.cells();
    expect(cells.map((r) => [r.d, r.i, r.s, r.b, r.f])).toEqual([
      [1234567890123456789n, 2147483647, -32768, 127, Math.fround(0.1)],
      [150n, 2, 100, -128, 16777216],
      [null, null, null, null, null],
    ]);
    expect((await t.rescued())[2]).toMatchObject({
      d: 0.001,
      i: 2147483648,
      s: 32768,
      b: 128,
      f: 16777217,
    });
  });

  it('timestamp, timestamp_ntz, date and binary take their text; anything else is rescued', async () => {
    const t = memoryTable({
      format: 'jsonl',
      schemaHints: { at: 'timestamp', local: 'timestamp_ntz', day: 'date', raw: 'binary' },
    });
    await t.write({
      'a.json': lines(
        '{"at":"2024-01-02T03:04:05-01:00","local":"2024-01-02T03:04:05","day":"2024-01-02","raw":"AAEC"}',
        '{"at":"2024-01-02T03:04:05","local":"2024-01-02T03:04:05Z","day":"2024-01-02T00:00:00","raw":"AAE"}',
      ),
    });
    const [first, second] = await t.cells();
    expect([first?.at, first?.local, first?.day, first?.raw]).toEqual([
      micros('2024-01-02T04:04:05Z'),
      micros('2024-01-02T03:04:05Z'),
      19724,
      new Uint8Array([0, 1, 2]),
    ]);
    expect([second?.at, second?.local, second?.day, second?.raw]).toEqual([null, null, null, null]);
    expect((await t.rescued())[1]).toMatchObject({
      at: '2024-01-02T03:04:05',
      local: '2024-01-02T03:04:05Z',
      day: '2024-01-02T00:00:00',
      raw: 'AAE',
    });
  });

  it('a decimal hint keeps digits no double holds, from JSON and CSV', async () => {
    const json = memoryTable({ format: 'jsonl', schemaHints: { d: 'decimal(38,18)' } });
    await json.write({
      'a.json': lines(
        '{"d":3.141592653589793238}',
        '{"d":12345678901234567890}',
        // A string in number syntax, as Spark's JSON reader takes it for a decimal; other text is rescued.
        '{"d":"12.50"}',
        '{"d":"12,50"}',
      ),
    });
    expect((await json.cells()).map((r) => r.d)).toEqual([
      3141592653589793238n,
      12345678901234567890n * 10n ** 18n,
      125n * 10n ** 17n,
      null,
    ]);
    const csv = memoryTable({ format: 'csv', schemaHints: { d: 'decimal(5,2)', day: 'date' } });
    await csv.write({ 'a.csv': 'd,day\n1.50,2024-01-02\n1.505,x\n' });
    expect((await csv.cells()).map((r) => [r.d, r.day])).toEqual([
      [150n, 19724],
      [null, null],
    ]);
    expect((await csv.rescued())[1]).toMatchObject({ d: '1.505', day: 'x' });
  });

  it('nested hints fit objects and arrays field by field; a map takes an object, keys converted exactly', async () => {
    const t = memoryTable({
      format: 'jsonl',
      schemaHints: { s: 'struct<at:timestamp,n:int>', a: 'array<date>', m: 'map<int,string>' },
    });
    await t.write({
      'a.json': lines(
        '{"s":{"at":"2024-01-02T03:04:05Z","n":1},"a":["2024-01-02",null],"m":{"1":"x","2":null}}',
        '{"s":{"at":"2024-01-02","n":1},"a":["x"],"m":{"01":"y"}}',
        '{"s":{"n":2,"other":1},"a":[],"m":{}}',
      ),
    });
    const cells = await t.cells();
    expect(cells.map((r) => [r.s, r.a, r.m])).toEqual([
      [
        { at: micros('2024-01-02T03:04:05Z'), n: 1 },
        [19724, null],
        [
          { key: 1, value: 'x' },
          { key: 2, value: null },
        ],
      ],
      [null, null, null],
      [null, [], []],
    ]);
    const rescued = await t.rescued();
    expect(rescued[1]).toMatchObject({ s: { at: '2024-01-02', n: 1 }, a: ['x'], m: { '01': 'y' } });
    expect(rescued[2]).toMatchObject({ s: { n: 2, other: 1 } });
  });
});

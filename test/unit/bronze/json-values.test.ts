import { describe, expect, it } from 'vitest';
import { memoryTable } from './table-io.ts';

const rawRescued = async (t: ReturnType<typeof memoryTable>) =>
  (await t.rows()).map((r) => r._rescued_data as string | null);

describe('column names are unique regardless of case (PROTOCOL.md "Schema Serialization Format")', () => {
  it('rescues a key that differs from another key of the version only by case, keeping its key and value', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': '{"id":1,"name":"ann"}\n{"ID":2,"Name":"bob","NAME":"cy"}\n' });
    expect(t.schema).toEqual([
      { name: 'id', type: 'long' },
      { name: 'name', type: 'string' },
    ]);
    const rows = await t.rows();
    expect(rows.map((r) => [r.id, r.name])).toEqual([
      [1n, 'ann'],
      [null, null],
    ]);
    expect((await t.rescued())[1]).toEqual({
      ID: 2,
      Name: 'bob',
      NAME: 'cy',
      _file_path: 's3://landing/a.json',
      _reasons: {
        ID: "differs only by case from column 'id' (Delta names are case-insensitive)",
        Name: "differs only by case from column 'name' (Delta names are case-insensitive)",
        NAME: "differs only by case from column 'name' (Delta names are case-insensitive)",
      },
    });
  });

  it('the first spelling in a version wins, within one record too, and a later version never adds a twin', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': '{"Amount":1,"amount":"x"}\n' });
    expect(t.schema).toEqual([{ name: 'Amount', type: 'long' }]);
    expect((await t.rescued())[0]).toMatchObject({ amount: 'x' });
    const second = await t.write({ 'b.json': '{"AMOUNT":2,"Amount":3,"other":true}\n' });
    expect(second.schema.map((c) => c.name)).toEqual(['Amount', 'other']);
    expect((await t.rows())[0]).toMatchObject({ Amount: 3n, other: true });
    expect((await t.rescued())[0]).toMatchObject({ AMOUNT: 2 });
  });

  it("rescues a key that is a system column's name in another case, in every evolution mode", async () => {
    for (const evolution of ['addNewColumns', 'rescue', 'none'] as const) {
      const t = memoryTable({ format: 'jsonl', evolution });
      await t.write({ 'a.json': '{"id":1,"_Source_File":"mine","_RESCUED_DATA":"x"}\n' });
      expect(t.schema).toEqual([{ name: 'id', type: 'long' }]);
      expect((await t.rescued())[0]).toMatchObject({ _Source_File: 'mine', _RESCUED_DATA: 'x' });
    }
  });

  it('CSV headers that differ only by case: the first is the column, the other is rescued', async () => {
    const t = memoryTable({ format: 'csv' });
    await t.write({ 'a.csv': 'Id,ID\n1,2\n' });
    expect(t.schema).toEqual([{ name: 'Id', type: 'long' }]);
    expect((await t.rescued())[0]).toMatchObject({ ID: '2' });
  });

  it('an empty CSV field is null in a rescued key too: nothing is rescued from it', async () => {
    for (const evolution of ['rescue', 'none'] as const) {
      const t = memoryTable({ format: 'csv', evolution });
      await t.write({ '1.csv': 'a,b\n1,x\n' });
      await t.write({ '2.csv': 'a,b,c,B\n2,,,\n3,y,z,Y\n' });
      const [empty, full] = await t.rescued();
      expect(empty).toBeNull();
      // Mode none ignores a new column, as Auto Loader's does; the case twin is rescued in both.
      expect(full).toMatchObject(evolution === 'rescue' ? { c: 'z', B: 'Y' } : { B: 'Y' });
    }
  });

  it('a hint claims its spelling: an observed key differing from it only by case is rescued', async () => {
    const t = memoryTable({ format: 'jsonl', schemaHints: { Zip: 'string' } });
    await t.write({ 'a.json': '{"zip":"01234"}\n' });
    expect(t.schema).toEqual([{ name: 'Zip', type: 'string' }]);
    expect((await t.rescued())[0]).toMatchObject({ zip: '01234' });
  });

  it('a key named __proto__ or constructor is a column like any other, not a prototype', async () => {
    const t = memoryTable({ format: 'jsonl', nested: 'jsonText' });
    await t.write({ 'a.json': '{"__proto__":{"a":1},"constructor":5}\n' });
    expect(t.schema).toEqual([
      { name: '__proto__', type: 'string' },
      { name: 'constructor', type: 'long' },
    ]);
    const [row] = await t.rows();
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('{"a":1}');
    expect(row?.constructor).toBe(5n);
  });
});

describe('JSON numbers are never rounded', () => {
  it('an integer past 2^53 within int64 is a long, exactly', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': '{"id":9007199254740993}\n{"id":-9223372036854775808}\n{"id":9223372036854775807}\n',
    });
    expect(t.schema).toEqual([{ name: 'id', type: 'long' }]);
    expect((await t.rows()).map((r) => r.id)).toEqual([9007199254740993n, -(2n ** 63n), 2n ** 63n - 1n]);
  });

  it('an integer beyond int64, or a decimal with more digits than a double holds, is rescued with its exact text', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({
      'a.json': '{"n":1,"x":0.5}\n{"n":9223372036854775808,"x":3.141592653589793238}\n{"n":2,"x":1e400}\n',
    });
    expect(t.schema).toEqual([
      { name: 'n', type: 'long' },
      { name: 'x', type: 'double' },
    ]);
    expect((await t.rows()).map((r) => [r.n, r.x])).toEqual([
      [1n, 0.5],
      [null, null],
      [2n, null],
    ]);
    const [, second, third] = await rawRescued(t);
    expect(second).toContain('"n":9223372036854775808,"x":3.141592653589793238,');
    expect(second).toContain(
      '"_reasons":{"n":"an integer beyond the long range","x":"more digits (or range) than a double holds"}',
    );
    expect(third).toContain('"x":1e400,');
  });

  it('a number without an exact type is kept as its exact text in a string column', async () => {
    const t = memoryTable({ format: 'jsonl', nested: 'jsonText' });
    await t.write({
      'a.json':
        '{"big":123456789012345678901234567890,"obj":{"n":12345678901234567890,"d":0.1}}\n{"big":"text"}\n',
    });
    expect(t.schema).toEqual([
      { name: 'big', type: 'string' },
      { name: 'obj', type: 'string' },
    ]);
    expect((await t.rows()).map((r) => [r.big, r.obj])).toEqual([
      ['123456789012345678901234567890', '{"n":12345678901234567890,"d":0.1}'],
      ['text', null],
    ]);
  });

  it('a decimal literal is a double even when whole (1.0, 1e3), as Spark infers it; an integer literal is a long', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': '{"a":1.0,"b":1,"c":1e3,"d":-0.0}\n' });
    expect(t.schema).toEqual([
      { name: 'a', type: 'double' },
      { name: 'b', type: 'long' },
      { name: 'c', type: 'double' },
      { name: 'd', type: 'double' },
    ]);
    const [row] = await t.rows();
    expect(row).toMatchObject({ a: 1, b: 1n, c: 1000 });
    expect(Object.is(row?.d, -0)).toBe(true);
  });

  it('long and double widen to double only when every long is exact as a double', async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': '{"a":1,"b":9007199254740993}\n{"a":2.5,"b":2.5}\n' });
    expect(t.schema).toEqual([
      { name: 'a', type: 'double' },
      { name: 'b', type: 'string' },
    ]);
    expect((await t.rows()).map((r) => [r.a, r.b])).toEqual([
      [1, '9007199254740993'],
      [2.5, '2.5'],
    ]);
  });

  it("a later version's value fits the table's column only exactly", async () => {
    const t = memoryTable({ format: 'jsonl' });
    await t.write({ 'a.json': '{"l":1,"d":0.5}\n' });
    await t.write({ 'b.json': '{"l":2.0,"d":7}\n{"l":2.5,"d":9007199254740993}\n' });
    expect((await t.rows()).map((r) => [r.l, r.d])).toEqual([
      [2n, 7],
      [null, null],
    ]);
    const raw = (await rawRescued(t))[1];
    expect(raw).toContain('"l":2.5,"d":9007199254740993,');
    expect(raw).toContain(
      `"l":"does not fit the column's type long","d":"does not fit the column's type double"`,
    );
  });

  it('CSV: an integer past int64 or a decimal past a double is rescued as its text; a leading zero stays text', async () => {
    const t = memoryTable({ format: 'csv' });
    await t.write({ 'a.csv': 'n,x,zip\n1,0.5,007\n12345678901234567890,3.141592653589793238,02134\n' });
    expect(t.schema).toEqual([
      { name: 'n', type: 'long' },
      { name: 'x', type: 'double' },
      { name: 'zip', type: 'string' },
    ]);
    expect((await t.rows()).map((r) => [r.n, r.x, r.zip])).toEqual([
      [1n, 0.5, '007'],
      [null, null, '02134'],
    ]);
    expect((await t.rescued())[1]).toMatchObject({ n: '12345678901234567890', x: '3.141592653589793238' });
  });

  it('a source key named _file_path or _reasons keeps its value in _rescued_data', async () => {
    const t = memoryTable({ format: 'jsonl', evolution: 'rescue' });
    await t.write({ 'a.json': '{"id":1}\n' });
    await t.write({ 'b.json': '{"id":2,"_file_path":"theirs","_reasons":"theirs too"}\n' });
    expect((await t.rescued())[0]).toEqual({ _file_path: 'theirs', _reasons: 'theirs too' });
  });
});

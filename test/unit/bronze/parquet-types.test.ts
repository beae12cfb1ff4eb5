import { readFileSync } from 'node:fs';
import type { SchemaElement } from 'hyparquet';
import { ByteWriter, parquetWrite } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { memoryTable } from './table-io.ts';

type Leaf = Omit<SchemaElement, 'name'>;
const opt = (e: Leaf): Leaf => ({ repetition_type: 'OPTIONAL', ...e });

/** A Parquet file of the given columns, each an element list (depth first, the column's own element first). */
function parquet(columns: Record<string, { elements: SchemaElement[]; data: unknown[] }>): Uint8Array {
  const writer = new ByteWriter();
  const entries = Object.entries(columns);
  parquetWrite({
    writer,
    schema: [{ name: 'root', num_children: entries.length }, ...entries.flatMap(([, c]) => c.elements)],
    columnData: entries.map(([name, c]) => ({ name, data: c.data as never })),
    statistics: false,
  });
  return writer.getBytes();
}
const col = (name: string, e: Leaf, data: unknown[]) => ({
  [name]: { elements: [{ name, ...opt(e) }], data },
});
const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../fixtures/parquet/${name}`, import.meta.url)));

describe('Parquet input keeps its types as Delta types', () => {
  it('timestamps keep every microsecond, UTC-adjusted or not; dates stay dates; decimals stay decimals', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        ...col(
          'at',
          { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
          [1704164645123456n, -1n, null],
        ),
        ...col('ms', { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' }, [
          1704164645123n,
          -62135596800000n,
          null,
        ]),
        ...col(
          'ns',
          { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } },
          [1704164645123456000n, -1000n, null],
        ),
        ...col('day', { type: 'INT32', converted_type: 'DATE' }, [19723, -719162, null]),
        ...col('d9', { type: 'INT32', converted_type: 'DECIMAL', precision: 9, scale: 2 }, [
          12345n,
          -1n,
          null,
        ]),
        ...col('d18', { type: 'INT64', converted_type: 'DECIMAL', precision: 18, scale: 4 }, [
          10n ** 18n - 1n,
          0n,
          null,
        ]),
        ...col(
          'd38',
          {
            type: 'FIXED_LEN_BYTE_ARRAY',
            type_length: 16,
            converted_type: 'DECIMAL',
            precision: 38,
            scale: 10,
          },
          [-(10n ** 38n - 1n), 1n, null],
        ),
      }),
    });
    expect(result.schema).toEqual([
      { name: 'at', type: 'timestamp' },
      { name: 'ms', type: 'timestamp' },
      { name: 'ns', type: 'timestamp' },
      { name: 'day', type: 'date' },
      { name: 'd9', type: 'decimal(9,2)' },
      { name: 'd18', type: 'decimal(18,4)' },
      { name: 'd38', type: 'decimal(38,10)' },
    ]);
    expect(result.rescued).toBe(0);
    expect((await t.cells()).map((r) => [r.at, r.ms, r.ns, r.day, r.d9, r.d18, r.d38])).toEqual([
      [
        1704164645123456n,
        1704164645123000n,
        1704164645123456n,
        19723,
        12345n,
        10n ** 18n - 1n,
        -(10n ** 38n - 1n),
      ],
      [-1n, -62135596800000000n, -1n, -719162, -1n, 0n, 1n],
      [null, null, null, null, null, null, null],
    ]);
    const schemaString = t.actions(0).find((a) => a.metaData)?.metaData?.schemaString as string;
    expect(
      JSON.parse(schemaString)
        .fields.slice(0, 7)
        .map((f: { type: unknown }) => f.type),
    ).toEqual([
      'timestamp',
      'timestamp',
      'timestamp',
      'date',
      'decimal(9,2)',
      'decimal(18,4)',
      'decimal(38,10)',
    ]);
  });

  it('integer widths, float and binary keep their Delta types (what Spark reads them as)', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        ...col('i8', { type: 'INT32', converted_type: 'INT_8' }, [-128, 127]),
        ...col('i16', { type: 'INT32', converted_type: 'INT_16' }, [-32768, 32767]),
        ...col('i32', { type: 'INT32' }, [-(2 ** 31), 2 ** 31 - 1]),
        ...col('u8', { type: 'INT32', converted_type: 'UINT_8' }, [0, 255]),
        ...col('u32', { type: 'INT32', converted_type: 'UINT_32' }, [0, 4294967295]),
        ...col('u64', { type: 'INT64', converted_type: 'UINT_64' }, [0n, 18446744073709551615n]),
        ...col('f', { type: 'FLOAT' }, [1.5, Number.NaN]),
        ...col('b', { type: 'BYTE_ARRAY' }, [new Uint8Array([0, 255]), new Uint8Array([])]),
        ...col(
          'tod',
          { type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } },
          [45296000001n, 0n],
        ),
      }),
    });
    expect(result.schema.map((c) => c.type)).toEqual([
      'byte',
      'short',
      'integer',
      'short',
      'long',
      'decimal(20,0)',
      'float',
      'binary',
      'string',
    ]);
    expect((await t.cells()).map((r) => [r.i8, r.i16, r.i32, r.u8, r.u32, r.u64, r.f, r.b, r.tod])).toEqual([
      [-128, -32768, -(2 ** 31), 0, 0n, 0n, 1.5, new Uint8Array([0, 255]), '12:34:56.000001'],
      [
        127,
        32767,
        2 ** 31 - 1,
        255,
        4294967295n,
        18446744073709551615n,
        Number.NaN,
        new Uint8Array([]),
        '00:00:00.000000',
      ],
    ]);
  });

  it('a timestamp with sub-microsecond digits, a decimal wider than 38 digits: rescued with the exact text', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        ...col(
          'ns',
          { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } },
          [1704164645123456789n, 1704164645123456000n],
        ),
        ...col(
          'wide',
          {
            type: 'FIXED_LEN_BYTE_ARRAY',
            type_length: 21,
            converted_type: 'DECIMAL',
            precision: 50,
            scale: 2,
          },
          [-(10n ** 50n - 1n), 150n],
        ),
      }),
    });
    expect(result.schema).toEqual([{ name: 'ns', type: 'timestamp' }]);
    const rows = await t.cells();
    expect(rows.map((r) => r.ns)).toEqual([null, 1704164645123456n]);
    const [first, second] = rows.map((r) => r._rescued_data as string);
    expect(first).toBe(
      `{"ns":"2024-01-02T03:04:05.123456789Z","wide":-${'9'.repeat(48)}.99,"_file_path":"s3://landing/a.parquet",` +
        `"_reasons":{"ns":"sub-microsecond digits: Delta timestamps hold microseconds","wide":"decimal(50,2) has no Delta type (at most 38 digits)"}}`,
    );
    expect(second).toContain('"wide":1.50,');
  });

  it('structs, lists and maps stay nested, nulls and empties kept; a map key named __proto__ is kept', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        s: {
          elements: [
            { name: 's', repetition_type: 'OPTIONAL', num_children: 2 },
            { name: 'a', ...opt({ type: 'INT64' }) },
            { name: 'b', ...opt({ type: 'BYTE_ARRAY', converted_type: 'UTF8' }) },
          ],
          data: [{ a: 1n, b: 'x' }, null, { a: null, b: null }],
        },
        l: {
          elements: [
            { name: 'l', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
            { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
            { name: 'element', ...opt({ type: 'INT32', converted_type: 'DATE' }) },
          ],
          data: [[0, null, 19723], [], null],
        },
        m: {
          elements: [
            { name: 'm', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'MAP' },
            { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
            { name: 'key', repetition_type: 'REQUIRED', type: 'BYTE_ARRAY', converted_type: 'UTF8' },
            { name: 'value', ...opt({ type: 'INT64' }) },
          ],
          data: [
            [
              { key: '__proto__', value: 1n },
              { key: 'b', value: null },
            ],
            [],
            null,
          ],
        },
      }),
    });
    expect(result.schema).toEqual([
      {
        name: 's',
        type: {
          type: 'struct',
          fields: [
            { name: 'a', type: 'long', nullable: true, metadata: {} },
            { name: 'b', type: 'string', nullable: true, metadata: {} },
          ],
        },
      },
      { name: 'l', type: { type: 'array', elementType: 'date', containsNull: true } },
      { name: 'm', type: { type: 'map', keyType: 'string', valueType: 'long', valueContainsNull: true } },
    ]);
    expect(result.rescued).toBe(0);
    // Read raw: the map's entries, not an object keyed by their text.
    const read = await t.cells();
    expect(read.map((r) => [r.s, r.l, r.m])).toEqual([
      [
        { a: 1n, b: 'x' },
        [0, null, 19723],
        [
          { key: '__proto__', value: 1n },
          { key: 'b', value: null },
        ],
      ],
      [null, [], []],
      [{ a: null, b: null }, null, null],
    ]);
  });

  it('a struct whose field names differ only by case cannot be a struct column: its values are rescued', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        pair: {
          elements: [
            { name: 'pair', repetition_type: 'OPTIONAL', num_children: 2 },
            { name: 'k', ...opt({ type: 'INT64' }) },
            { name: 'K', ...opt({ type: 'INT64' }) },
          ],
          data: [{ k: 1n, K: 2n }, null],
        },
        ...col('id', { type: 'INT32' }, [1, 2]),
      }),
    });
    expect(result.schema).toEqual([{ name: 'id', type: 'integer' }]);
    expect(
      (await t.rescued()).map(
        (r) => r && { pair: r.pair, reason: (r._reasons as Record<string, string>).pair },
      ),
    ).toEqual([
      {
        pair: { k: 1, K: 2 },
        reason: "struct fields 'k' and 'K' differ only by case (Delta names are case-insensitive)",
      },
      null,
    ]);
  });

  it('two files of a version declaring a column differently: widened only where every value converts exactly', async () => {
    const t = memoryTable({ format: 'parquet' });
    const result = await t.write({
      'a.parquet': parquet({
        ...col('n', { type: 'INT32' }, [1]),
        ...col('x', { type: 'INT64' }, [9007199254740993n]),
        ...col('d', { type: 'INT32', converted_type: 'DECIMAL', precision: 5, scale: 2 }, [12345n]),
      }),
      'b.parquet': parquet({
        ...col('n', { type: 'INT64' }, [2n ** 40n]),
        ...col('x', { type: 'DOUBLE' }, [2.5]),
        ...col('d', { type: 'INT32', converted_type: 'DECIMAL', precision: 7, scale: 1 }, [-1234567n]),
      }),
    });
    // integer + long -> long; long + double has no exact common type: the first file's wins;
    // decimal(5,2) + decimal(7,1) -> decimal(8,2).
    expect(result.schema).toEqual([
      { name: 'n', type: 'long' },
      { name: 'x', type: 'long' },
      { name: 'd', type: 'decimal(8,2)' },
    ]);
    expect((await t.cells()).map((r) => [r.n, r.x, r.d])).toEqual([
      [1n, 9007199254740993n, 12345n],
      [2n ** 40n, null, -12345670n],
    ]);
    expect((await t.rescued())[1]).toMatchObject({ x: 2.5 });
  });

  it("a later file's value that fits the table's column exactly lands there; one that does not is rescued", async () => {
    const t = memoryTable({ format: 'parquet' });
    await t.write({ 'a.parquet': parquet(col('v', { type: 'INT32', converted_type: 'INT_16' }, [1])) });
    await t.write({ 'b.parquet': parquet(col('v', { type: 'INT64' }, [32767n, 32768n])) });
    expect(t.schema).toEqual([{ name: 'v', type: 'short' }]);
    expect((await t.rows()).map((r) => r.v)).toEqual([32767, null]);
    expect((await t.rescued())[1]).toMatchObject({
      v: 32768,
      _reasons: { v: "does not fit the column's type short" },
    });
  });

  it('a file Spark wrote (INT96 timestamps, timestamp_ntz, decimals, nested) keeps every type and value', async () => {
    for (const file of ['spark-all-types.parquet', 'spark-all-types-legacy.parquet']) {
      const t = memoryTable({ format: 'parquet' });
      const result = await t.write({ [file]: fixture(file) });
      expect(result).toMatchObject({ rows: 200, rescued: 0 });
      expect(result.schema.map((c) => [c.name, typeof c.type === 'string' ? c.type : c.type.type])).toEqual([
        ['ByteType', 'byte'],
        ['ShortType', 'short'],
        ['IntegerType', 'integer'],
        ['LongType', 'long'],
        ['FloatType', 'float'],
        ['DoubleType', 'double'],
        ['decimal', 'decimal(10,2)'],
        ['BooleanType', 'boolean'],
        ['StringType', 'string'],
        ['BinaryType', 'binary'],
        ['DateType', 'date'],
        ['TimestampType', 'timestamp'],
        ['TimestampNTZType', 'timestamp_ntz'],
        ['nested_struct', 'struct'],
        ['array_of_prims', 'array'],
        ['array_of_arrays', 'array'],
        ['array_of_structs', 'array'],
        ['map_of_prims', 'map'],
        ['map_of_rows', 'map'],
        ['map_of_arrays', 'map'],
      ]);
      // Row 1 as pyarrow reads the source: 123.52, 1970-01-01T06:30:23.523Z, 1970-01-03T17:03:54.000200.
      const rows = await t.cells();
      expect(rows[1]).toMatchObject({
        decimal: 12352n,
        TimestampType: 23423523000n,
        TimestampNTZType: 234234000200n,
        FloatType: Math.fround(0.234),
        nested_struct: { aa: '1', ac: { aca: 1 } },
      });
      expect(rows[199]).toMatchObject({ ByteType: -57, decimal: 2458048n, DateType: 46 });
    }
  });
});

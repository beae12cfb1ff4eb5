import { parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';

import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';

const config = bronzeConfigSchema.parse({ format: 'parquet' });

function parquetFile(columns: Parameters<typeof parquetWriteBuffer>[0]['columnData'], rowGroupSize?: number) {
  return new Uint8Array(parquetWriteBuffer({ columnData: columns, rowGroupSize }));
}

async function write(
  sources: MemorySources,
  delta: MemoryDelta,
  version: number,
  keys: string[],
  schema?: TableSchema,
) {
  return writeVersion(
    { sources, delta },
    { table: 't', location: 's3://b/p', config, manifest: manifestOf('t', version, keys), schema },
  );
}

async function rowsOf(delta: MemoryDelta) {
  const out: Record<string, unknown>[] = [];
  for (const bytes of delta.files.values()) {
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    out.push(...(await parquetReadObjects({ file })));
  }
  return out;
}

describe('Parquet landing files', () => {
  it('take their column types from the Parquet schema, even a column that is only null', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    const big = 2n ** 60n + 1n;
    sources.objects.set(
      'a.parquet',
      parquetFile(
        [
          { name: 'id', data: [1n, big, 3n], type: 'INT64' },
          { name: 'price', data: [1.5, 2, null], type: 'DOUBLE' },
          { name: 'name', data: ['x', null, 'z'], type: 'STRING' },
          { name: 'ok', data: [true, false, true], type: 'BOOLEAN' },
          { name: 'never', data: [null, null, null], type: 'INT32' },
          { name: 'at', data: [new Date('2026-11-30T10:00:00Z'), null, null], type: 'TIMESTAMP' },
        ],
        2,
      ),
    );
    const result = await write(sources, delta, 1, ['a.parquet']);
    expect(result).toMatchObject({ rows: 3, rescued: 0 });
    expect(result.schema).toEqual([
      { name: 'id', type: 'long' },
      { name: 'price', type: 'double' },
      { name: 'name', type: 'string' },
      { name: 'ok', type: 'boolean' },
      { name: 'never', type: 'integer' },
      { name: 'at', type: 'timestamp' },
    ]);
    const rows = await rowsOf(delta);
    expect(rows.map((r) => r.id)).toEqual([1n, big, 3n]);
    expect(rows.map((r) => r.price)).toEqual([1.5, 2, null]);
    expect(rows[0]).toMatchObject({
      name: 'x',
      ok: true,
      never: null,
      at: new Date('2026-11-30T10:00:00.000Z'),
    });
    expect(rows[0]?._source_file).toBe('s3://landing/a.parquet');
  });

  it('rescues values whose type does not fit the table, with bigints as JSON numbers', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('a.parquet', parquetFile([{ name: 'code', data: [1n], type: 'INT64' }]));
    const first = await write(sources, delta, 1, ['a.parquet']);
    sources.objects.set(
      'b.parquet',
      parquetFile([
        { name: 'code', data: ['A7', null], type: 'STRING' },
        { name: 'n', data: [5n, 6n], type: 'INT64' },
      ]),
    );
    const second = await write(sources, delta, 2, ['b.parquet'], first.schema);
    expect(second).toMatchObject({ rows: 2, rescued: 1 });
    expect(second.schema).toEqual([
      { name: 'code', type: 'long' },
      { name: 'n', type: 'long' },
    ]);
    const rescued = (await rowsOf(delta))
      .map((r) => r._rescued_data)
      .filter((r): r is string => typeof r === 'string');
    expect(rescued.map((r) => JSON.parse(r))).toEqual([
      {
        code: 'A7',
        _file_path: 's3://landing/b.parquet',
        _reasons: { code: "does not fit the column's type long" },
      },
    ]);
  });

  it('widens a column two files declare differently, and rescues a file that is not Parquet', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('a.parquet', parquetFile([{ name: 'v', data: [1], type: 'INT32' }]));
    sources.objects.set('b.parquet', parquetFile([{ name: 'v', data: [2n ** 40n], type: 'INT64' }]));
    sources.objects.set('c.parquet', 'this is csv,not parquet\n');
    const result = await write(sources, delta, 1, ['a.parquet', 'b.parquet', 'c.parquet']);
    expect(result.schema).toEqual([{ name: 'v', type: 'long' }]);
    expect(result).toMatchObject({ rows: 3, rescued: 1 });
    const rows = await rowsOf(delta);
    expect(rows.map((r) => r.v)).toEqual([1n, 2n ** 40n, null]);
    expect(JSON.parse(String(rows[2]?._rescued_data))).toMatchObject({
      _error: expect.stringContaining('not a Parquet file'),
      _file_path: 's3://landing/c.parquet',
    });
  });
});

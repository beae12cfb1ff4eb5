import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { logKey, parseCommit } from '../../../shared/bronze/delta-log.ts';
import { NewColumnsError } from '../../../shared/bronze/errors.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';

import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';

const config = (over: Record<string, unknown> = {}) => bronzeConfigSchema.parse({ format: 'json', ...over });

async function rowsOf(delta: MemoryDelta, path: string) {
  const bytes = delta.files.get(path);
  if (!bytes) throw new Error(`no data file ${path}`);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file: buffer });
}

function actions(delta: MemoryDelta, version: number) {
  return (delta.commits.get(version) ?? '')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);
}

describe('writing one manifest version as a Delta commit', () => {
  it('infers JSON types, adds source file and version columns, and commits protocol + metaData at version 0', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set(
      'o/a.json',
      '{"id":1,"amount":2.5,"ok":true,"name":"x"}\n{"id":2,"amount":3,"ok":false}\n',
    );
    const result = await writeVersion(
      { sources, delta },
      {
        table: 'orders',
        location: 's3://b/p',
        config: config(),
        manifest: manifestOf('orders', 1, ['o/a.json']),
        schema: undefined,
      },
    );
    expect(result).toMatchObject({ deltaVersion: 0, rows: 2, rescued: 0, files: 1 });
    expect(result.schema).toEqual([
      { name: 'id', type: 'long' },
      { name: 'amount', type: 'double' },
      { name: 'ok', type: 'boolean' },
      { name: 'name', type: 'string' },
    ]);
    const log = actions(delta, 0);
    expect(log.map((a) => Object.keys(a)[0])).toEqual(['commitInfo', 'protocol', 'metaData', 'txn', 'add']);
    expect(log[3]?.txn).toMatchObject({ appId: 'inlet-bronze-orders', version: 1 });
    const add = log[4]?.add as { path: string; size: number; stats: string };
    expect(add.path).toBe('part-00000000000000000001-00000-a.snappy.parquet');
    expect(add.size).toBe(delta.files.get(add.path)?.byteLength);
    // Data skipping statistics of every column (file-stats.ts); booleans get no bounds, as in Spark.
    expect(JSON.parse(add.stats)).toEqual({
      numRecords: 2,
      minValues: {
        id: 1,
        amount: 2.5,
        name: 'x',
        _source_file: 's3://landing/o/a.json',
        _manifest_version: 1,
      },
      maxValues: { id: 2, amount: 3, name: 'x', _source_file: 's3://landing/o/a.json', _manifest_version: 1 },
      nullCount: {
        id: 0,
        amount: 0,
        ok: 0,
        name: 1,
        _rescued_data: 2,
        _source_file: 0,
        _manifest_version: 0,
      },
    });
    const rows = await rowsOf(delta, add.path);
    expect(rows).toEqual([
      {
        id: 1n,
        amount: 2.5,
        ok: true,
        name: 'x',
        _rescued_data: null,
        _source_file: 's3://landing/o/a.json',
        _manifest_version: 1n,
      },
      {
        id: 2n,
        amount: 3,
        ok: false,
        name: null,
        _rescued_data: null,
        _source_file: 's3://landing/o/a.json',
        _manifest_version: 1n,
      },
    ]);
    expect(logKey(0)).toBe('_delta_log/00000000000000000000.json');
  });

  it('infers CSV types from text, applies schema hints, and rescues bad rows with the file they came from', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('c/a.csv', 'zip,qty,price\n01234,3,1.5\n99,x-bad,2\n7,1\n');
    const result = await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: config({ format: 'csv', schemaHints: { zip: 'string', qty: 'long' } }),
        manifest: manifestOf('t', 1, ['c/a.csv']),
        schema: undefined,
      },
    );
    expect(result.schema).toEqual([
      { name: 'zip', type: 'string' },
      { name: 'qty', type: 'long' },
      { name: 'price', type: 'double' },
    ]);
    const rows = await rowsOf(delta, 'part-00000000000000000001-00000-a.snappy.parquet');
    expect(rows.map((r) => [r.zip, r.qty, r.price])).toEqual([
      ['01234', 3n, 1.5],
      ['99', null, 2],
      [null, null, null],
    ]);
    expect(JSON.parse(rows[1]?._rescued_data as string)).toEqual({
      qty: 'x-bad',
      _file_path: 's3://landing/c/a.csv',
      _reasons: { qty: "does not fit the column's type long" },
    });
    expect(JSON.parse(rows[2]?._rescued_data as string)).toMatchObject({
      _corrupt_record: '7,1',
      _file_path: 's3://landing/c/a.csv',
    });
    expect(result.rescued).toBe(2);
    expect(parseCommit('t', delta.commits.get(0) ?? '')).toMatchObject({
      rows: 3,
      rescued: 2,
      manifestVersion: 1,
    });
  });

  const v1: TableSchema = [{ name: 'id', type: 'long' }];

  it('addNewColumns: a new column joins the schema with a metaData action in the same commit; a misfit is rescued', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('b.json', '{"id":"not-a-number","color":"red"}\n');
    const result = await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: config(),
        manifest: manifestOf('t', 2, ['b.json']),
        schema: v1,
      },
    );
    expect(result.schema).toEqual([...v1, { name: 'color', type: 'string' }]);
    expect(actions(delta, 1).map((a) => Object.keys(a)[0])).toEqual(['commitInfo', 'metaData', 'txn', 'add']);
    const rows = await rowsOf(delta, 'part-00000000000000000002-00000-a.snappy.parquet');
    expect(rows[0]).toMatchObject({ id: null, color: 'red', _manifest_version: 2n });
    expect(JSON.parse(rows[0]?._rescued_data as string)).toEqual({
      id: 'not-a-number',
      _file_path: 's3://landing/b.json',
      _reasons: { id: "does not fit the column's type long" },
    });
  });

  it('rescue keeps new columns out of the schema and in _rescued_data; none drops them; no metaData action', async () => {
    for (const evolution of ['rescue', 'none'] as const) {
      const sources = new MemorySources();
      const delta = new MemoryDelta();
      sources.objects.set('b.json', '{"id":5,"color":"red"}\n');
      const result = await writeVersion(
        { sources, delta },
        {
          table: 't',
          location: 's3://b/p',
          config: config({ evolution }),
          manifest: manifestOf('t', 2, ['b.json']),
          schema: v1,
        },
      );
      expect(result.schema).toEqual(v1);
      expect(actions(delta, 1).map((a) => Object.keys(a)[0])).toEqual(['commitInfo', 'txn', 'add']);
      const rows = await rowsOf(delta, 'part-00000000000000000002-00000-a.snappy.parquet');
      expect(rows[0]?.id).toBe(5n);
      expect(rows[0]?._rescued_data === null ? null : JSON.parse(rows[0]?._rescued_data as string)).toEqual(
        evolution === 'rescue'
          ? {
              color: 'red',
              _file_path: 's3://landing/b.json',
              _reasons: { color: 'new column, kept out by evolution mode rescue' },
            }
          : null,
      );
    }
  });

  it('failOnNewColumns: the version fails loudly and nothing is committed', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('b.json', '{"id":5,"color":"red"}\n');
    await expect(
      writeVersion(
        { sources, delta },
        {
          table: 't',
          location: 's3://b/p',
          config: config({ evolution: 'failOnNewColumns' }),
          manifest: manifestOf('t', 2, ['b.json']),
          schema: v1,
        },
      ),
    ).rejects.toBeInstanceOf(NewColumnsError);
    // Only the commit that gave the table its schema v1.
    expect(delta.commits.size).toBe(1);
  });

  it('splits a version into several data files at maxFileBytes, named for the attempt', async () => {
    const sources = new MemorySources(64 * 1024);
    const delta = new MemoryDelta();
    const line = (i: number) => JSON.stringify({ id: i, text: `${i}-${'q'.repeat(200)}-${Math.sin(i)}` });
    sources.objects.set('big.json', Array.from({ length: 30_000 }, (_, i) => line(i)).join('\n'));
    const result = await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: { ...config(), maxFileBytes: 256 * 1024 },
        manifest: manifestOf('t', 1, ['big.json']),
        schema: undefined,
        rowGroupRows: 1000,
      },
    );
    expect(result.files).toBeGreaterThan(2);
    expect([...delta.files.keys()].sort()).toEqual(
      Array.from(
        { length: result.files },
        (_, i) => `part-00000000000000000001-${String(i).padStart(5, '0')}-a.snappy.parquet`,
      ),
    );
    let total = 0;
    for (const bytes of delta.files.values())
      total += (await rowsOf(delta, [...delta.files].find(([, b]) => b === bytes)?.[0] ?? '')).length;
    expect(total).toBe(30_000);
    expect(result.rows).toBe(30_000);
  });

  it('a crash before the commit leaves orphans under its own names; the next attempt commits other names, once', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('a.json', '{"id":1}\n{"id":2}\n');
    const input = {
      table: 't',
      location: 's3://b/p',
      config: config(),
      manifest: manifestOf('t', 1, ['a.json']),
      schema: undefined,
    };
    delta.failNext = 'commit';
    await expect(writeVersion({ sources, delta }, input)).rejects.toThrow('crash before the commit write');
    const orphan = 'part-00000000000000000001-00000-a.snappy.parquet';
    const orphanBytes = delta.files.get(orphan);
    expect(orphanBytes).toBeDefined();
    const again = await writeVersion({ sources, delta }, { ...input, attempt: 'b' });
    expect(again).toMatchObject({ deltaVersion: 0, rows: 2 });
    // PROTOCOL.md "Data Files": never overwritten. The orphan is untouched and not in the log.
    expect(delta.files.get(orphan)).toBe(orphanBytes);
    expect(delta.commits.size).toBe(1);
    const paths = actions(delta, 0).flatMap((a) => (a.add ? [a.add.path] : []));
    expect(paths).toEqual(['part-00000000000000000001-00000-b.snappy.parquet']);
  });

  it('records a landing file that no longer exists instead of failing the version', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('a.json', '{"id":1}\n');
    const result = await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: config(),
        manifest: manifestOf('t', 1, ['a.json', 'gone.json']),
        schema: undefined,
      },
    );
    expect(result.rows).toBe(1);
    const info = actions(delta, 0)[0]?.commitInfo as { inlet: { missingSources: string[] } };
    expect(info.inlet.missingSources).toEqual(['s3://landing/gone.json']);
  });

  it('keeps a column name Delta cannot store (space, comma, =) out of the schema and rescues its values', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('a.json', '{"id":1,"bad name":"x","a=b":2}\n');
    const result = await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: config({ evolution: 'none' }),
        manifest: manifestOf('t', 1, ['a.json']),
        schema: undefined,
      },
    );
    expect(result.schema).toEqual([{ name: 'id', type: 'long' }]);
    const rows = await rowsOf(delta, 'part-00000000000000000001-00000-a.snappy.parquet');
    expect(JSON.parse(rows[0]?._rescued_data as string)).toEqual({
      'bad name': 'x',
      'a=b': 2,
      _file_path: 's3://landing/a.json',
      _reasons: {
        'bad name': 'Delta cannot store a column name with any of " ,;{}()\\n\\t="',
        'a=b': 'Delta cannot store a column name with any of " ,;{}()\\n\\t="',
      },
    });
  });
});

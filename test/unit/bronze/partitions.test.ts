import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { UnwritableTableError } from '../../../shared/bronze/errors.ts';
import { dataFileKeyOf } from '../../../shared/bronze/partition-paths.ts';
import { MAX_OPEN_PARTITIONS } from '../../../shared/bronze/partitioned-writer.ts';
import { checkWritable, loadHead } from '../../../shared/bronze/table-head.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { sinkSetup } from './sink-fixture.ts';

const config = (over: Record<string, unknown>) => bronzeConfigSchema.parse({ format: 'json', ...over });

const buffer = (bytes: Uint8Array) =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

function actions(delta: MemoryDelta, version: number) {
  return (delta.commits.get(version) ?? '')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);
}

interface Add {
  path: string;
  partitionValues: Record<string, string | null>;
  stats: string;
}
const addsOf = (delta: MemoryDelta, version: number) =>
  actions(delta, version).flatMap((a) => (a.add ? [a.add as unknown as Add] : []));

/** The rows of every file a commit adds, each with its file's partition values. */
async function rowsOf(delta: MemoryDelta, version: number) {
  const rows: Record<string, unknown>[] = [];
  for (const add of addsOf(delta, version)) {
    const bytes = delta.files.get(dataFileKeyOf(add.path));
    if (!bytes) throw new Error(`no data file at ${dataFileKeyOf(add.path)}`);
    for (const row of await parquetReadObjects({ file: buffer(bytes) }))
      rows.push({ ...row, ...add.partitionValues });
  }
  return rows;
}

async function write(bronze: Record<string, unknown>, lines: readonly unknown[], rowGroupRows?: number) {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  sources.objects.set('o/a.json', lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  await writeVersion(
    { sources, delta },
    {
      table: 't',
      location: 's3://b/p',
      config: config(bronze),
      manifest: manifestOf('t', 1, ['o/a.json']),
      schema: undefined,
      rowGroupRows,
    },
  );
  return delta;
}

describe('a partitioned bronze table', () => {
  it('writes one file per partition value in one commit, under col=value/ directories escaped as Spark does', async () => {
    const delta = await write({ schemaHints: { region: 'string' }, partitionBy: ['region'] }, [
      { id: 1, region: 'east' },
      { id: 2, region: 'x/y=z%' },
      { id: 3 },
      { id: 4, region: 'east' },
    ]);
    const meta = actions(delta, 0).find((a) => a.metaData)?.metaData as {
      partitionColumns: string[];
      schemaString: string;
    };
    expect(meta.partitionColumns).toEqual(['region']);
    expect(JSON.parse(meta.schemaString).fields.map((f: { name: string }) => f.name)).toEqual([
      'id',
      'region',
      '_rescued_data',
      '_source_file',
      '_manifest_version',
    ]);
    const adds = addsOf(delta, 0);
    // Closed least recently written first.
    expect(adds.map((a) => [a.path.split('/part-')[0], a.partitionValues])).toEqual([
      ['region=x%252Fy%253Dz%2525', { region: 'x/y=z%' }],
      ['region=__HIVE_DEFAULT_PARTITION__', { region: null }],
      ['region=east', { region: 'east' }],
    ]);
    for (const add of adds) {
      const bytes = delta.files.get(dataFileKeyOf(add.path)) as Uint8Array;
      // Spark writes partition columns into no data file, and keeps no statistics of them.
      const columns = parquetMetadata(buffer(bytes)).schema.map((e) => e.name);
      expect(columns).toEqual(['root', 'id', '_rescued_data', '_source_file', '_manifest_version']);
      expect(Object.keys(JSON.parse(add.stats).nullCount)).toEqual([
        'id',
        '_rescued_data',
        '_source_file',
        '_manifest_version',
      ]);
    }
    expect((await rowsOf(delta, 0)).map((r) => [r.id, r.region])).toEqual([
      [2n, 'x/y=z%'],
      [3n, null],
      [1n, 'east'],
      [4n, 'east'],
    ]);
  });

  it('rescues a value of another type or an empty string, and files the row under the null partition', async () => {
    const delta = await write({ schemaHints: { n: 'long', s: 'string' }, partitionBy: ['n', 's'] }, [
      { id: 1, n: 'abc', s: '' },
      { id: 2, n: 5, s: 'k' },
    ]);
    const rows = await rowsOf(delta, 0);
    expect(rows.map((r) => [r.id, r.n, r.s])).toEqual([
      [1n, null, null],
      [2n, '5', 'k'],
    ]);
    const rescued = JSON.parse(rows[0]?._rescued_data as string);
    expect(rescued).toMatchObject({ n: 'abc', s: '' });
    expect(rescued._reasons.s).toMatch(/empty string partition value reads as null/);
    expect(addsOf(delta, 0)[0]?.path).toMatch(
      /^n=__HIVE_DEFAULT_PARTITION__\/s=__HIVE_DEFAULT_PARTITION__\//,
    );
  });

  it('partitions by the ingestion date, the UTC day of the manifest commit, a column of the log only', async () => {
    const delta = await write({ partitionBy: ['_ingest_date'] }, [{ id: 1, _ingest_date: 'spoofed' }]);
    const meta = actions(delta, 0).find((a) => a.metaData)?.metaData as { schemaString: string };
    expect(JSON.parse(meta.schemaString).fields.map((f: { name: string; type: string }) => f)).toContainEqual(
      { name: '_ingest_date', type: 'date', nullable: true, metadata: {} },
    );
    expect(JSON.parse(meta.schemaString).fields.at(-1).name).toBe('_ingest_date');
    const [add] = addsOf(delta, 0);
    expect(add?.partitionValues).toEqual({ _ingest_date: '2026-11-30' });
    expect(add?.path).toMatch(/^_ingest_date=2026-11-30\/part-/);
    const [row] = await rowsOf(delta, 0);
    // A source key named like the column is rescued, as a key named like any column the sink adds.
    expect(JSON.parse(row?._rescued_data as string)).toMatchObject({ _ingest_date: 'spoofed' });
  });

  it('keeps a bounded number of partitions open: beyond it the least recent one is closed, no row lost', async () => {
    const distinct = MAX_OPEN_PARTITIONS + 4;
    const regions = [
      ...Array.from({ length: distinct }, (_, i) => `r${i}`),
      // r0 again: its first file was closed when a later value needed a writer; the last value is still open.
      'r0',
      `r${distinct - 1}`,
    ];
    const delta = await write(
      { schemaHints: { region: 'string' }, partitionBy: ['region'] },
      regions.map((region, id) => ({ id, region })),
    );
    const adds = addsOf(delta, 0);
    expect(adds.length).toBe(distinct + 1);
    for (const add of adds) expect(add.path.startsWith(`region=${add.partitionValues.region}/`)).toBe(true);
    const rows = await rowsOf(delta, 0);
    expect(rows.map((r) => [Number(r.id), r.region]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual(
      regions.map((region, id) => [id, region]),
    );
  });

  it('bounds buffered rows across partitions: the fullest buffer becomes a row group, files stay one per partition', async () => {
    const rows = Array.from({ length: 12 }, (_, id) => ({ id, region: `r${id % 3}` }));
    const delta = await write({ schemaHints: { region: 'string' }, partitionBy: ['region'] }, rows, 4);
    const adds = addsOf(delta, 0);
    expect(adds.map((a) => a.partitionValues.region).sort()).toEqual(['r0', 'r1', 'r2']);
    for (const add of adds) {
      const meta = parquetMetadata(buffer(delta.files.get(dataFileKeyOf(add.path)) as Uint8Array));
      // 4 rows buffered in all: each partition's 4 rows went out in more than one row group.
      expect(meta.row_groups.length).toBeGreaterThan(1);
      expect(Number(meta.num_rows)).toBe(4);
    }
    expect((await rowsOf(delta, 0)).length).toBe(12);
  });

  it('refuses to write a table whose partition columns are not partitionBy: they cannot change after the first commit', async () => {
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    sources.objects.set('o/a.json', '{"id":1,"region":"e"}\n');
    await writeVersion(
      { sources, delta },
      {
        table: 't',
        location: 's3://b/p',
        config: config({}),
        manifest: manifestOf('t', 1, ['o/a.json']),
        schema: undefined,
      },
    );
    const head = await loadHead(delta, 't', Number.POSITIVE_INFINITY);
    expect(() => checkWritable(head, 't', 's3://b/p', ['region'])).toThrow(UnwritableTableError);
    expect(() => checkWritable(head, 't', 's3://b/p', ['region'])).toThrow(
      /partitionBy is \[region\] but the table is not partitioned: partition columns cannot change after the first commit without rewriting/,
    );
    expect(() => checkWritable(head, 't', 's3://b/p', [])).not.toThrow();
  });
});

describe('the sink on a partitioned table', () => {
  it('writes every version under its ingestion date, and goes on across runs', async () => {
    const s = sinkSetup({ bronze: { partitionBy: ['_ingest_date'] } });
    s.commit(1);
    await s.catchUp();
    s.commit(2);
    await s.catchUp();
    const values = [0, 1].flatMap((v) => addsOf(s.delta, v).map((a) => a.partitionValues));
    expect(values).toEqual(Array(2).fill({ _ingest_date: '2026-11-30' }));
  });
});

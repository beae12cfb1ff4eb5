import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { venvPython } from '../../local/paths.ts';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3SourceObjects } from '../../shared/bronze/aws/s3-source-objects.ts';
import type { BronzeConfigInput } from '../../shared/bronze/config.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { readBronzeTable } from '../../shared/bronze/table-state.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { testClients, testTarget } from '../support/aws.ts';
import { PipelineHarness } from '../support/harness.ts';

/**
 * No value altered, no table made unreadable: landing files written by pyarrow and by Spark (a
 * writer Inlet did not write) with every type the sink maps, through the real pipeline on the emulator,
 * read back by delta-rs (a reader Inlet did not write) and compared value by value with what pyarrow reads
 * from the landing files.
 */
const run = promisify(execFile);
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const clientSets: ReturnType<typeof testClients>[] = [];
const dirs: string[] = [];
afterAll(() => {
  clientSets.forEach(destroyClients);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Version {
  rows: number;
  schema: [string, string][];
  protocol: [number, number, string[] | null, string[] | null];
  rescued: string[];
  records: Record<string, unknown>[];
}
interface ReadBack {
  version: number;
  versions: Record<string, Version>;
  compare?: Record<string, Record<string, unknown>>;
}

async function readBack(uri: string, ...extra: string[]): Promise<ReadBack> {
  const target = testTarget();
  if (target.kind !== 'emulator') throw new Error('these tests read the table back from the emulator');
  const args = [here('./bronze_read.py'), uri, target.endpoint, target.region, ...extra, '--exact'];
  const { stdout } = await run(venvPython, args, { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as ReadBack;
}

async function setup(bronze: BronzeConfigInput) {
  const clients = testClients();
  clientSets.push(clients);
  const h = await PipelineHarness.create(clients, {
    config: { tables: [{ name: 'events', prefix: 'events/', bronze }] },
    countRequests: false,
  });
  const cursors = new DynamoDbSinkCursorStore({
    client: clients.dynamodb,
    tableName: h.resources.ledgerTable,
  });
  const sink = new SinkTable({
    config: h.config,
    store: h.store,
    sources: new S3SourceObjects(clients.s3),
    deltaAt: (bucket, prefix) => new S3DeltaStore(clients.s3, bucket, prefix),
    cursors,
    manifestBucket: h.resources.manifestBucket,
    log: silentLog,
    now: Date.now,
  });
  /** Each round of landing files becomes one manifest version. */
  const round = async (files: Record<string, string | Uint8Array>) => {
    for (const [key, Body] of Object.entries(files))
      await clients.s3.send(
        new PutObjectCommand({ Bucket: h.resources.landingBucket, Key: `events/${key}`, Body }),
      );
    await h.runUntilQuiet();
  };
  const uri = `s3://${h.resources.manifestBucket}/events/_bronze`;
  const landing = (key: string) => `s3://${h.resources.landingBucket}/events/${key}`;
  return { h, sink, cursors, round, uri, landing, clients };
}

describe('bronze values, read back by delta-rs', () => {
  it('Parquet from pyarrow and Spark: every type, nested, null and edge value arrives exactly as written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inlet-bronze-values-'));
    dirs.push(dir);
    await run(venvPython, [here('./bronze_fixtures.py'), dir]);
    for (const name of ['spark-all-types.parquet', 'spark-all-types-legacy.parquet'])
      copyFileSync(here(`../fixtures/parquet/${name}`), join(dir, name));
    const file = (name: string) => new Uint8Array(readFileSync(join(dir, name)));

    // A checkpoint at Delta version 2, after the protocol moved: readers start from it (features included).
    const t = await setup({ format: 'parquet', checkpointInterval: 2 });
    await t.round({
      'basic.parquet': file('basic.parquet'),
      'decimal_ints.parquet': file('decimal_ints.parquet'),
    });
    await t.round({ 'ntz.parquet': file('ntz.parquet') });
    await t.round({
      'int96.parquet': file('int96.parquet'),
      'spark-all-types.parquet': file('spark-all-types.parquet'),
      'spark-all-types-legacy.parquet': file('spark-all-types-legacy.parquet'),
    });
    // A struct with a `__proto__`-free twin field, a column `Name` beside `name`, `_Source_File`: one file
    // that would have made the whole table unreadable before.
    await t.round({ 'rescue.parquet': file('rescue.parquet') });
    expect((await t.sink.catchUp('events', Number.POSITIVE_INFINITY)).written).toEqual([0, 1, 2, 3]);

    const table = await readBack(t.uri, '--compare', dir, '--rescued', 'wide,pair,name,_Source_File');
    const differences = Object.entries(table.compare ?? {}).flatMap(([name, columns]) =>
      Object.entries(columns)
        .filter(([column, result]) => column !== 'rows' && result !== 'ok')
        .map(([column, result]) => `${name} ${column}: ${result}`),
    );
    expect(differences).toEqual([]);
    expect(Object.values(table.compare ?? {}).map((c) => c.rows)).toEqual([
      [6, 6],
      [6, 6],
      [6, 6],
      [6, 6],
      [4, 4],
      [200, 200],
      [200, 200],
    ]);

    // The protocol moves to table features in the version that first has a timestamp_ntz column.
    expect(Object.values(table.versions).map((v) => v.protocol)).toEqual([
      [1, 2, null, null],
      [3, 7, ['timestampNtz'], ['appendOnly', 'invariants', 'timestampNtz']],
      [3, 7, ['timestampNtz'], ['appendOnly', 'invariants', 'timestampNtz']],
      [3, 7, ['timestampNtz'], ['appendOnly', 'invariants', 'timestampNtz']],
    ]);
    const last = table.versions['3'] as Version;
    expect(last.schema).toContainEqual(['Name', 'string']);
    expect(
      last.schema.map(([n]) => n.toLowerCase()).filter((n) => n === 'name' || n === '_source_file'),
    ).toEqual(['name', '_source_file']);
    const rescued = last.rescued.filter((r) => r.includes(`"_file_path":"${t.landing('rescue.parquet')}"`));
    expect(rescued).toHaveLength(4);
    expect(rescued.find((r) => r.includes('"mine"'))).toBe(
      '{"ts_ns":"2024-01-02T03:04:05.123456789Z","wide":123456789012345678901234567890123456789012345678.91,' +
        '"pair":{"k":1,"K":2},"name":"lower","_Source_File":"mine",' +
        `"_file_path":"${t.landing('rescue.parquet')}","_reasons":{` +
        '"ts_ns":"sub-microsecond digits: Delta timestamps hold microseconds",' +
        '"wide":"decimal(50,2) has no Delta type (at most 38 digits)",' +
        `"pair":"struct fields 'k' and 'K' differ only by case (Delta names are case-insensitive)",` +
        `"name":"differs only by case from column 'Name' (Delta names are case-insensitive)",` +
        `"_Source_File":"'_source_file' is a column the sink adds (names are case-insensitive)"}}`,
    );
    expect(rescued.find((r) => r.includes('"_Source_File":"x"'))).toContain(
      '"ts_ns":"1969-12-31T23:59:59.999999999Z"',
    );
    // `inlet table` reads the nested schema back from the log.
    const reader = testClients();
    clientSets.push(reader);
    const state = await readBronzeTable(
      'events',
      new S3DeltaStore(reader.s3, t.h.resources.manifestBucket, 'events/_bronze'),
    );
    expect(state.schema.find((c) => c.name === 'map_int')?.type).toEqual({
      type: 'map',
      keyType: 'integer',
      valueType: { type: 'array', elementType: 'string', containsNull: true },
      valueContainsNull: true,
    });
    expect(state).toMatchObject({ version: 3, rows: 428, rescued: 4, checkpointVersion: 2, commitsRead: 1 });
    // Without the commits before the checkpoint, delta-rs must read its protocol (features) and schema.
    for (const v of [0, 1])
      await reader.s3.send(
        new DeleteObjectCommand({
          Bucket: t.h.resources.manifestBucket,
          Key: `events/_bronze/_delta_log/${String(v).padStart(20, '0')}.json`,
        }),
      );
    const fromCheckpoint = await readBack(t.uri, '2');
    expect(fromCheckpoint.versions['3']).toEqual(table.versions['3']);
    expect(fromCheckpoint.versions['2']?.protocol).toEqual(table.versions['2']?.protocol);
  });

  it('JSON keys that differ only by case and integers past 2^53: a readable table, every value exact', async () => {
    const t = await setup({ format: 'jsonl' });
    await t.round({
      'a.json':
        '{"id":9007199254740993,"name":"ann","price":1.0}\n' +
        '{"id":-9223372036854775808,"Name":"bob","_Source_File":"x","price":0.1}\n',
    });
    await t.round({
      'b.json':
        '{"ID":7,"id":9223372036854775807,"price":3.141592653589793238}\n' +
        '{"id":9223372036854775808,"name":"cy","price":2}\n',
    });
    await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    const table = await readBack(t.uri);
    const v1 = table.versions['1'] as Version;
    expect(v1.schema.slice(0, 3)).toEqual([
      ['id', 'int64'],
      ['name', 'string'],
      ['price', 'double'],
    ]);
    expect(v1.records.map((r) => [r.id, r.name, r.price])).toEqual([
      ['-9223372036854775808', null, '0.1'],
      ['9007199254740993', 'ann', '1.0'],
      ['9223372036854775807', null, null],
      [null, 'cy', '2.0'],
    ]);
    const raw = v1.rescued.sort();
    expect(raw).toHaveLength(3);
    expect(raw.find((r) => r.includes('"Name"'))).toContain('"Name":"bob","_Source_File":"x",');
    expect(raw.find((r) => r.includes('"ID"'))).toContain('"ID":7,"price":3.141592653589793238,');
    expect(raw.find((r) => r.includes('9223372036854775808'))).toContain(
      '"id":9223372036854775808,"_file_path"',
    );
  });
});

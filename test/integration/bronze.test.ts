import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { parquetMetadataAsync } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { venvPython } from '../../local/paths.ts';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3LandingCleaner } from '../../shared/bronze/aws/s3-landing-cleaner.ts';
import { S3SourceObjects } from '../../shared/bronze/aws/s3-source-objects.ts';
import { checkpointName } from '../../shared/bronze/checkpoint.ts';
import type { CleanSourceConfig } from '../../shared/bronze/config.ts';
import type { DeltaStore } from '../../shared/bronze/ports.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { writeCheckpoint } from '../../shared/bronze/snapshot.ts';
import { readBronzeTable } from '../../shared/bronze/table-state.ts';
import type { PipelineConfigInput } from '../../shared/config/pipeline-config.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { sinkCursorKey } from '../../shared/ingestion/ledger-keys.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { testClients, testTarget } from '../support/aws.ts';
import { PipelineHarness } from '../support/harness.ts';

const run = promisify(execFile);
const reader = fileURLToPath(new URL('./bronze_read.py', import.meta.url));
const maintainer = fileURLToPath(new URL('./bronze_maintain.py', import.meta.url));
const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

interface ReadBack {
  version: number;
  txnVersion?: number | null;
  versions: Record<
    string,
    { rows: number; schema: [string, string][]; rescued: string[]; records: Record<string, unknown>[] }
  >;
}

async function readWithDeltalake(uri: string, from = 0, appId?: string): Promise<ReadBack> {
  const target = testTarget();
  if (target.kind !== 'emulator') throw new Error('these tests read the table back from the emulator');
  const args = [reader, uri, target.endpoint, target.region, String(from), ...(appId ? [appId] : [])];
  const { stdout } = await run(venvPython, args, {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ReadBack;
}

async function setup(
  bronze: NonNullable<PipelineConfigInput['tables'][number]['bronze']>,
  cleanSource?: (landingBucket: string) => CleanSourceConfig,
) {
  const clients = testClients();
  clientSets.push(clients);
  const config = { tables: [{ name: 'events', prefix: 'events/', bronze }] };
  // The sink's role comes from the template of the tables it runs with, cleanSource included.
  const h = await PipelineHarness.create(clients, {
    config,
    countRequests: false,
    templateTables: (r) => [
      {
        name: 'events',
        prefix: 'events/',
        bronze: { ...bronze, ...(cleanSource ? { cleanSource: cleanSource(r.landingBucket) } : {}) },
      },
    ],
  });
  const sinkClients = h.clientsOf('Sink');
  /** Each round of uploads becomes one manifest version. */
  const round = async (files: Record<string, string>) => {
    for (const [key, body] of Object.entries(files)) await h.put(`events/${key}`, body);
    await h.runUntilQuiet();
  };
  let crashAt: ((what: 'data' | 'commit' | 'checkpoint') => boolean) | undefined;
  const deltaAt = (bucket: string, prefix: string): DeltaStore => {
    const real = new S3DeltaStore(sinkClients.s3, bucket, prefix);
    return {
      putDataFile: async (path, bytes) => {
        if (crashAt?.('data')) throw new Error('crash before a data file');
        await real.putDataFile(path, bytes);
      },
      putCommitIfAbsent: async (version, body) => {
        if (crashAt?.('commit')) throw new Error('crash before the commit');
        return real.putCommitIfAbsent(version, body);
      },
      getCommit: (version) => real.getCommit(version),
      listCommits: (after) => real.listCommits(after),
      putLogFile: (name, body) => real.putLogFile(name, body),
      getLogFile: (name) => real.getLogFile(name),
      openLogFile: (name) => real.openLogFile(name),
      streamLogFile: (name) => {
        const out = real.streamLogFile(name);
        return {
          write: (chunk) => out.write(chunk),
          close: async () => {
            if (crashAt?.('checkpoint')) {
              await out.abort();
              throw new Error('crash before a checkpoint file');
            }
            await out.close();
          },
          abort: () => out.abort(),
        };
      },
    };
  };
  const cursors = new DynamoDbSinkCursorStore({
    client: sinkClients.dynamodb,
    tableName: h.resources.ledgerTable,
  });
  // cleanSource names a bucket only known once the harness made it.
  const withClean = cleanSource?.(h.resources.landingBucket);
  const sink = new SinkTable({
    config: withClean
      ? {
          ...h.config,
          tables: h.config.tables.map((t) => ({
            ...t,
            bronze: t.bronze && { ...t.bronze, cleanSource: withClean },
          })),
        }
      : h.config,
    cleaner: new S3LandingCleaner(sinkClients.s3),
    store: new S3BatchStore({ client: sinkClients.s3, bucket: h.resources.manifestBucket }),
    sources: new S3SourceObjects(sinkClients.s3),
    deltaAt,
    cursors,
    heads: cursors,
    manifestBucket: h.resources.manifestBucket,
    log: silentLog,
    now: Date.now,
  });
  const uri = `s3://${h.resources.manifestBucket}/events/_bronze`;
  /** One Parquet landing file as one manifest version. */
  const parquetRound = async (
    key: string,
    columnData: Parameters<typeof parquetWriteBuffer>[0]['columnData'],
  ) => {
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: h.resources.landingBucket,
        Key: `events/${key}`,
        Body: new Uint8Array(parquetWriteBuffer({ columnData, rowGroupSize: 2 })),
      }),
    );
    await h.runUntilQuiet();
  };
  /** The table as `inlet table` reads it, from the log alone, with clients of no function's role. */
  const tableState = () => {
    const reader = testClients();
    clientSets.push(reader);
    return readBronzeTable(
      'events',
      new S3DeltaStore(reader.s3, h.resources.manifestBucket, 'events/_bronze'),
    );
  };
  return {
    h,
    sink,
    tableState,
    parquetRound,
    cursors,
    uri,
    round,
    crash: (f: typeof crashAt) => {
      crashAt = f;
    },
  };
}

describe('bronze Delta table, read back by delta-rs', () => {
  it("measures a run cut short against the ledger's committed head (the lag metric)", async () => {
    const t = await setup({ format: 'jsonl' });
    await t.round({ 'a.json': '{"id":1}\n' });
    await t.round({ 'b.json': '{"id":2}\n' });
    expect(await t.cursors.committedHead('events')).toBe(2);
    expect(await t.cursors.committedHead('no-such-table')).toBe(0);

    const cut = await t.sink.catchUp('events', Date.now());
    expect(cut).toMatchObject({ written: [], caughtUp: false, behind: 2 });
    const full = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(full).toMatchObject({ written: [0, 1], caughtUp: true, behind: 0 });
  });

  it('JSON with schema drift and bad records: rows, evolved schema, rescued data and time travel', async () => {
    const t = await setup({ format: 'jsonl', schemaHints: { zip: 'string' } });
    await t.round({ 'a.json': '{"id":1,"zip":"01234","amount":2.5}\n{"id":2,"zip":"9","amount":3}\n' });
    await t.round({
      'b.json': '{"id":3,"amount":"lots","color":"red"}\nnot json at all\n{"id":4,"color":"blue"}\n',
    });
    const outcome = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(outcome).toMatchObject({ written: [0, 1], caughtUp: true });

    const table = await readWithDeltalake(t.uri);
    expect(table.version).toBe(1);
    const v0 = table.versions['0'];
    const v1 = table.versions['1'];
    expect(v0?.rows).toBe(2);
    expect(v0?.schema.map(([name]) => name)).toEqual([
      'id',
      'zip',
      'amount',
      '_rescued_data',
      '_source_file',
      '_manifest_version',
    ]);
    expect(v0?.records.map((r) => r.zip)).toEqual(['01234', '9']);
    expect(v1?.rows).toBe(5);
    expect(v1?.schema).toContainEqual(['color', 'string']);
    expect(v1?.schema).toContainEqual(['id', 'int64']);
    expect(v1?.rescued.map((r) => JSON.parse(r))).toEqual(
      expect.arrayContaining([
        {
          amount: 'lots',
          _file_path: `s3://${t.h.resources.landingBucket}/events/b.json`,
          _reasons: { amount: "does not fit the column's type double" },
        },
        expect.objectContaining({ _corrupt_record: 'not json at all' }),
      ]),
    );
    expect(v1?.records.filter((r) => r._manifest_version === 2).map((r) => r.color)).toEqual(
      expect.arrayContaining(['red', 'blue', null]),
    );
    expect(await t.cursors.get('events')).toMatchObject({ deltaVersion: 1, rows: 5, rescued: 2 });
    // What `inlet table` shows, from the log alone.
    const state = await t.tableState();
    expect(state).toMatchObject({ version: 1, rows: 5, rescued: 2, files: 2 });
    expect(state.schema.map((c) => c.name)).toEqual(['id', 'zip', 'amount', 'color']);
  });

  it('CSV with a header, a new column and a short row', async () => {
    const t = await setup({ format: 'csv' });
    await t.round({ '1.csv': 'id,name\n1,ann\n2,bob\n' });
    await t.round({ '2.csv': 'id,name,score\n3,cy,9.5\n4,dee\n' });
    await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    const table = await readWithDeltalake(t.uri);
    expect(table.versions['1']?.rows).toBe(4);
    expect(table.versions['1']?.schema.slice(0, 3)).toEqual([
      ['id', 'int64'],
      ['name', 'string'],
      ['score', 'double'],
    ]);
    expect(table.versions['1']?.rescued).toHaveLength(1);
  });

  it('a crash at every point of a version replays to the same table: no duplicate and no missing row', async () => {
    const t = await setup({ format: 'json' });
    await t.round({ 'a.json': '{"n":1}\n{"n":2}\n', 'b.json': '{"n":3}\n' });
    await t.round({ 'c.json': '{"n":4}\n' });
    // Crash before the data file, then before the commit, then after the commit (cursor not advanced).
    t.crash((what) => what === 'data');
    await expect(t.sink.catchUp('events', Number.POSITIVE_INFINITY)).rejects.toThrow(
      'crash before a data file',
    );
    t.crash((what) => what === 'commit');
    await expect(t.sink.catchUp('events', Number.POSITIVE_INFINITY)).rejects.toThrow(
      'crash before the commit',
    );
    t.crash(undefined);
    const advance = t.cursors.advance.bind(t.cursors);
    let crashes = 1;
    t.cursors.advance = async (from, to) => {
      if (crashes-- > 0) throw new Error('crash before the cursor');
      return advance(from, to);
    };
    await expect(t.sink.catchUp('events', Number.POSITIVE_INFINITY)).rejects.toThrow(
      'crash before the cursor',
    );
    const outcome = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(outcome.written).toEqual([0, 1]);
    const table = await readWithDeltalake(t.uri);
    expect(table.versions['0']?.records.map((r) => r.n)).toEqual([1, 2, 3]);
    expect(table.versions['1']?.records.map((r) => r.n).sort()).toEqual([1, 2, 3, 4]);
    expect(await t.cursors.get('events')).toMatchObject({ deltaVersion: 1, rows: 4 });
  });

  it('a checkpoint every N versions: delta-rs reads through it, time travels, and inlet table starts from it', async () => {
    const t = await setup({ format: 'jsonl', checkpointInterval: 2 });
    for (let v = 1; v <= 4; v++)
      await t.round({ [`r${v}.json`]: `{"n":${v}}\n{"n":${v * 10},"tag":"t${v}"}\nbroken ${v}\n` });
    // The first try dies before the checkpoint file of Delta version 2, after its commit: nothing is lost.
    let crashes = 1;
    t.crash((what) => what === 'checkpoint' && crashes-- > 0);
    await expect(t.sink.catchUp('events', Number.POSITIVE_INFINITY)).rejects.toThrow(
      'crash before a checkpoint',
    );
    expect(await t.cursors.get('events')).toMatchObject({ deltaVersion: 1 });
    t.crash(undefined);
    expect((await t.sink.catchUp('events', Number.POSITIVE_INFINITY)).written).toEqual([2, 3]);

    const bucket = t.h.resources.manifestBucket;
    const reader = testClients();
    clientSets.push(reader);
    const logObject = async (name: string) =>
      (
        await reader.s3.send(
          new GetObjectCommand({ Bucket: bucket, Key: `events/_bronze/_delta_log/${name}` }),
        )
      ).Body?.transformToString();
    expect(JSON.parse((await logObject('_last_checkpoint')) ?? '')).toMatchObject({
      version: 2,
      numOfAddFiles: 3,
    });
    const full = await readWithDeltalake(t.uri, 0, 'inlet-bronze-events');
    expect(Object.values(full.versions).map((v) => v.rows)).toEqual([3, 6, 9, 12]);
    expect(full.txnVersion).toBe(4);

    // The checkpoint again, a row group of two actions at a time, as a table of any size gets it: readers
    // take a multi-row-group checkpoint as they take one group.
    const store = new S3DeltaStore(reader.s3, bucket, 'events/_bronze');
    await writeCheckpoint(store, 2, 2);
    const rewritten = await store.openLogFile(checkpointName(2));
    if (!rewritten) throw new Error('no checkpoint 2');
    expect((await parquetMetadataAsync(rewritten)).row_groups.length).toBe(3);

    // Metadata cleanup (PROTOCOL.md "Metadata Cleanup"): the commits before the checkpoint go. Every reader
    // must now start from the checkpoint; delta-rs and ours give the same table.
    for (const v of [0, 1])
      await reader.s3.send(
        new DeleteObjectCommand({
          Bucket: bucket,
          Key: `events/_bronze/_delta_log/${String(v).padStart(20, '0')}.json`,
        }),
      );
    const cleaned = await readWithDeltalake(t.uri, 2, 'inlet-bronze-events');
    expect(cleaned.version).toBe(3);
    expect(cleaned.txnVersion).toBe(4);
    expect(cleaned.versions['2']).toEqual(full.versions['2']);
    expect(cleaned.versions['3']).toEqual(full.versions['3']);
    expect(cleaned.versions['3']?.records.map((r) => r.n)).toEqual(
      expect.arrayContaining([1, 10, 2, 20, 3, 30, 4, 40]),
    );
    const state = await readBronzeTable('events', new S3DeltaStore(reader.s3, bucket, 'events/_bronze'));
    expect(state).toMatchObject({
      version: 3,
      rows: 12,
      rescued: 4,
      files: 4,
      checkpointVersion: 2,
      commitsRead: 1,
    });
    expect(state.schema.map((c) => c.name)).toEqual(['n', 'tag']);
  });

  it('another writer with conditional puts (delta-rs OPTIMIZE, SET TBLPROPERTIES) between versions: the sink goes on at the next free version', async () => {
    const t = await setup({ format: 'jsonl' });
    await t.round({ 'a.json': '{"n":1}\n', 'b.json': '{"n":2}\n' });
    await t.round({ 'c.json': '{"n":3}\n' });
    await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    const target = testTarget();
    if (target.kind !== 'emulator') throw new Error('this test maintains the table on the emulator');
    const { stdout } = await run(venvPython, [maintainer, t.uri, target.endpoint, target.region]);
    const maintained = JSON.parse(stdout) as { before: number; after: number };
    expect(maintained).toMatchObject({ before: 1, after: 3 });
    // A new column: the sink's commit carries a metaData, which must keep delta-rs's table property.
    await t.round({ 'd.json': '{"n":4,"color":"red"}\n' });
    const outcome = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(outcome).toMatchObject({ written: [4], versions: [3] });
    const table = await readWithDeltalake(t.uri, 4, 'inlet-bronze-events');
    expect(table.version).toBe(4);
    expect(table.txnVersion).toBe(3);
    expect(table.versions['4']?.records.map((r) => r.n).sort()).toEqual([1, 2, 3, 4]);
    expect(table.versions['4']?.schema.map(([name]) => name)).toContain('color');
    const reader = testClients();
    clientSets.push(reader);
    const commit = await new S3DeltaStore(
      reader.s3,
      t.h.resources.manifestBucket,
      'events/_bronze',
    ).getCommit(4);
    expect(commit).toContain('"delta.logRetentionDuration":"interval 60 days"');
    expect(await t.cursors.get('events')).toMatchObject({ manifestVersion: 3, deltaVersion: 4, rows: 4 });
  });

  it('continues a table the previous sink wrote: its cursor item (Delta version and schema, no manifest version) read as that', async () => {
    const t = await setup({ format: 'jsonl' });
    await t.round({ 'a.json': '{"n":1}\n' });
    await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    // The item as the sink before parts wrote it.
    const doc = DynamoDBDocumentClient.from(t.h.clients.dynamodb);
    await doc.send(
      new PutCommand({
        TableName: t.h.resources.ledgerTable,
        Item: {
          ...sinkCursorKey('events'),
          deltaVersion: 0,
          schema: JSON.stringify([{ name: 'n', type: 'long' }]),
          rows: 1,
          rescued: 0,
        },
      }),
    );
    await t.round({ 'b.json': '{"n":2}\n' });
    expect(await t.sink.catchUp('events', Number.POSITIVE_INFINITY)).toMatchObject({
      written: [1],
      versions: [2],
    });
    const { Item } = await doc.send(
      new GetCommand({ TableName: t.h.resources.ledgerTable, Key: sinkCursorKey('events') }),
    );
    expect(Item).toMatchObject({ manifestVersion: 2, filesDone: 0, deltaVersion: 1, rows: 2 });
    expect(Item?.schema).toBeUndefined();
    const table = await readWithDeltalake(t.uri, 1, 'inlet-bronze-events');
    expect(table.txnVersion).toBe(2);
    expect(table.versions['1']?.records.map((r) => r.n).sort()).toEqual([1, 2]);
  });

  it('a version with 12,000 columns: the cursor item carries no schema, so it stays far under 400 KB', async () => {
    const t = await setup({ format: 'jsonl' });
    const record = Object.fromEntries(
      Array.from({ length: 12_000 }, (_, i) => [`column_number_${String(i).padStart(5, '0')}`, i]),
    );
    await t.round({ 'wide.json': `${JSON.stringify(record)}\n` });
    const outcome = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(outcome).toMatchObject({ caughtUp: true, versions: [1] });
    expect(await t.cursors.get('events')).toMatchObject({ manifestVersion: 1, deltaVersion: 0, rows: 1 });
    const state = await t.tableState();
    expect(state.schema).toHaveLength(12_000);
  });

  it("a checkpoint bigger than one upload part is a multipart upload under the sink's role: whole at the complete, nothing after an abort", async () => {
    const t = await setup({ format: 'jsonl' });
    const sinkStore = new S3DeltaStore(
      t.h.clientsOf('Sink').s3,
      t.h.resources.manifestBucket,
      'events/_bronze',
    );
    // One part of 8 MiB (the upload's part size), then a last part of 1 KiB at the complete.
    const part = new Uint8Array(8 * 1024 * 1024).fill(7);
    const tail = new Uint8Array(1024).fill(9);
    const out = sinkStore.streamLogFile(checkpointName(7));
    await out.write(part);
    await out.write(tail);
    await out.close();
    const read = await sinkStore.getLogFile(checkpointName(7));
    expect(read?.byteLength).toBe(part.byteLength + tail.byteLength);
    expect(read?.slice(part.byteLength)).toEqual(tail);

    const dropped = sinkStore.streamLogFile(checkpointName(8));
    await dropped.write(part);
    await dropped.abort();
    expect(await sinkStore.getLogFile(checkpointName(8))).toBeUndefined();
    const admin = testClients();
    clientSets.push(admin);
    const uploads = await admin.s3.send(
      new ListMultipartUploadsCommand({ Bucket: t.h.resources.manifestBucket, Prefix: 'events/_bronze/' }),
    );
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('Parquet landing files: types from the Parquet schema, read over ranged GETs, rescued misfits', async () => {
    const t = await setup({ format: 'parquet' });
    await t.parquetRound('a.parquet', [
      { name: 'id', data: [1n, 2n, 3n], type: 'INT64' },
      { name: 'price', data: [9.5, null, 1], type: 'DOUBLE' },
      { name: 'note', data: [null, null, null], type: 'INT32' },
    ]);
    await t.parquetRound('b.parquet', [
      { name: 'id', data: ['x7', '4'], type: 'STRING' },
      { name: 'city', data: ['Oslo', null], type: 'STRING' },
    ]);
    await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    const table = await readWithDeltalake(t.uri);
    expect(table.versions['0']?.schema.slice(0, 3)).toEqual([
      ['id', 'int64'],
      ['price', 'double'],
      ['note', 'int32'],
    ]);
    expect(table.versions['0']?.records.map((r) => r.price)).toEqual([9.5, null, 1]);
    const v1 = table.versions['1'];
    expect(v1?.rows).toBe(5);
    expect(v1?.schema).toContainEqual(['city', 'string']);
    // b.parquet declares id as text: its values do not fit the long column (as a JSON string would not).
    const landing = `s3://${t.h.resources.landingBucket}/events/b.parquet`;
    expect(v1?.records.filter((r) => r._manifest_version === 2).map((r) => [r.id, r.city])).toEqual([
      [null, 'Oslo'],
      [null, null],
    ]);
    const reasons = { id: "does not fit the column's type long" };
    expect(v1?.rescued.map((r) => JSON.parse(r))).toEqual([
      { id: 'x7', _file_path: landing, _reasons: reasons },
      { id: '4', _file_path: landing, _reasons: reasons },
    ]);
  });

  it('cleanSource moves landing files of written versions (keys with space, + and unicode) and repeats safely', async () => {
    const t = await setup({ format: 'jsonl' }, (landing) => ({
      action: 'move',
      moveTo: `s3://${landing}/archive`,
      retentionDays: 0,
    }));
    const key = 'a b+c é.json';
    await t.round({ [key]: '{"n":1}\n' });
    const outcome = await t.sink.catchUp('events', Number.POSITIVE_INFINITY);
    expect(outcome).toMatchObject({ written: [0], cleaned: [1] });
    const landing = t.h.resources.landingBucket;
    const exists = async (k: string) =>
      t.h.clients.s3.send(new GetObjectCommand({ Bucket: landing, Key: k })).then(
        async (r) => r.Body?.transformToString(),
        (e: Error) => (e.name === 'NoSuchKey' ? undefined : Promise.reject(e)),
      );
    expect(await exists(`events/${key}`)).toBeUndefined();
    expect(await exists(`archive/${landing}/events/${key}`)).toBe('{"n":1}\n');
    // The table still has the row: cleaning never touches the Delta table.
    expect((await readWithDeltalake(t.uri)).versions['0']?.rows).toBe(1);
    // A repeat (a crash after the delete, before the clean cursor) finds the source gone and is done.
    const cleaner = new S3LandingCleaner(t.h.clientsOf('Sink').s3);
    const ref = (await t.h.store.getManifest('events', 1))?.files[0];
    if (!ref) throw new Error('no manifest 1');
    expect(await cleaner.move(ref, { bucket: landing, prefix: 'archive', perWrite: false })).toEqual({
      kind: 'gone',
    });
    expect(await cleaner.remove(ref)).toEqual({ kind: 'gone' });
  });
});

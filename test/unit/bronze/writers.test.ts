// The bronze sink beside other writers of its table: another run of the sink, a
// maintenance job, a moved location, a table written by an older sink.
import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { cursorFromItem } from '../../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../../shared/bronze/aws/s3-delta-store.ts';
import { buildCommit, logKey, parseCommit } from '../../../shared/bronze/delta-log.ts';
import { SinkTableMismatchError, UnwritableTableError } from '../../../shared/bronze/errors.ts';
import type { DeltaStore, SourceObjects } from '../../../shared/bronze/ports.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { protocolChange, protocolProblems } from '../../../shared/bronze/table-features.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { liveRows, MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

function setup(location?: string) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const sink = (over: { deltaAt?: () => DeltaStore; sources?: SourceObjects; location?: string } = {}) =>
    new SinkTable({
      config: parsePipelineConfig({
        tables: [{ name: 't', bronze: { format: 'json', location: over.location ?? location } }],
      }),
      store: { getManifest: async (_table, version) => manifests.get(version) },
      sources: over.sources ?? sources,
      deltaAt: over.deltaAt ?? (() => delta),
      cursors,
      manifestBucket: 'mb',
      log: silentLog,
      now: () => 0,
      sleep: async () => undefined,
    });
  const commit = (v: number, lines: string[]) => {
    sources.objects.set(`f${v}.json`, `${lines.join('\n')}\n`);
    manifests.set(v, manifestOf('t', v, [`f${v}.json`]));
  };
  return { manifests, sources, delta, cursors, sink, commit };
}

const catchUp = (sink: SinkTable) => sink.catchUp('t', Number.POSITIVE_INFINITY);

/** `[id, _manifest_version]` of every row in the table's live files (each the file its add names), sorted. */
const rows = async (delta: MemoryDelta) =>
  (await liveRows(delta)).map((row) => `${row.id}@${row._manifest_version}`).sort();

const lines = (delta: MemoryDelta, version: number) =>
  (delta.commits.get(version) ?? '')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);

describe('two runs of the sink on one table (F11)', () => {
  it('never rewrite a committed data file, even when the landing file changed between their reads', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}', '{"id":2}']);
    // The second run stops at its first data file write (or, reading each file twice, at its second read)
    // until the first run has committed the version; meanwhile the landing file is rewritten.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let waiting!: () => void;
    const atGate = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    let opens = 0;
    const slowSources: SourceObjects = {
      open: async (ref, identity) => {
        opens += 1;
        if (opens === 2) {
          waiting();
          await gate;
        }
        return t.sources.open(ref, identity);
      },
      openRandom: (ref, identity) => t.sources.openRandom(ref, identity),
    };
    const slowDelta = new Proxy(t.delta, {
      get: (target, prop, receiver) =>
        prop === 'putDataFile'
          ? async (path: string, bytes: Uint8Array) => {
              waiting();
              await gate;
              return target.putDataFile(path, bytes);
            }
          : Reflect.get(target, prop, receiver),
    });
    const second = catchUp(t.sink({ sources: slowSources, deltaAt: () => slowDelta }));
    await atGate;
    await catchUp(t.sink());
    const committed = await rows(t.delta);
    t.sources.objects.set('f1.json', '{"id":1}\n{"id":2}\n{"id":99}\n{"id":100}\n');
    release();
    await second;

    expect(await rows(t.delta)).toEqual(committed);
    expect(committed).toEqual(['1@1', '2@1']);
    expect([...t.delta.commits.keys()]).toEqual([0]);
    expect(await t.cursors.get('t')).toMatchObject({ manifestVersion: 1, rows: 2 });
  });
});

/** A commit another Delta writer makes, with its own `commitInfo`. */
const foreign = (operation: string, ...actions: object[]) =>
  `${[{ commitInfo: { operation, engineInfo: 'Apache-Spark/4.0.0 Delta-Lake/4.0.0' } }, ...actions]
    .map((a) => JSON.stringify(a))
    .join('\n')}\n`;

describe('another writer on the table (F12)', () => {
  it("steps over a compaction and a table-properties change, and keeps the other writer's properties", async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    t.commit(2, ['{"id":2}']);
    await catchUp(t.sink());
    const { state } = await loadSnapshot(t.delta);
    const [first] = [...state.adds.values()];
    if (!first) throw new Error('no file');
    // OPTIMIZE rewrites a file (dataChange false: same rows), then SET TBLPROPERTIES re-emits the metaData.
    t.delta.files.set('part-compacted.snappy.parquet', t.delta.files.get(first.path) as Uint8Array);
    t.delta.commits.set(
      2,
      foreign(
        'OPTIMIZE',
        { remove: { path: first.path, deletionTimestamp: 1, dataChange: false } },
        { add: { ...first, path: 'part-compacted.snappy.parquet', dataChange: false } },
      ),
    );
    const properties = { 'delta.logRetentionDuration': 'interval 60 days' };
    t.delta.commits.set(
      3,
      foreign('SET TBLPROPERTIES', { metaData: { ...state.metaData, configuration: properties } }),
    );
    // A new column: the sink's next commit carries a metaData of its own.
    t.commit(3, ['{"id":3,"color":"red"}']);

    const outcome = await catchUp(t.sink());

    expect(outcome).toMatchObject({ caughtUp: true, written: [4], versions: [3] });
    const metaData = lines(t.delta, 4).find((a) => a.metaData)?.metaData;
    expect(metaData).toMatchObject({ id: state.metaData?.id, configuration: properties });
    expect(String(metaData?.schemaString)).toContain('"color"');
    expect(await rows(t.delta)).toEqual(['1@1', '2@2', '3@3']);
    expect(await t.cursors.get('t')).toMatchObject({ manifestVersion: 3, deltaVersion: 4, rows: 3 });
  });

  it('takes the next free version when another writer commits between its read and its put', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    await catchUp(t.sink());
    t.commit(2, ['{"id":2}']);
    const put = t.delta.putCommitIfAbsent.bind(t.delta);
    let raced = false;
    t.delta.putCommitIfAbsent = async (version, body) => {
      if (!raced) {
        raced = true;
        // A logged VACUUM lands first (delta-rs with conditional put creates it the same way).
        await put(version, foreign('VACUUM START'));
      }
      return put(version, body);
    };
    expect(await catchUp(t.sink())).toMatchObject({ written: [2], versions: [2] });
    expect(parseCommit('t', t.delta.commits.get(1) ?? '').ours).toBe(false);
    expect(parseCommit('t', t.delta.commits.get(2) ?? '')).toMatchObject({ ours: true, manifestVersion: 2 });
    expect(await rows(t.delta)).toEqual(['1@1', '2@2']);
  });

  it('writes a part again when another writer changed the schema under it', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    await catchUp(t.sink());
    t.commit(2, ['{"id":2,"color":"red"}']);
    const { state } = await loadSnapshot(t.delta);
    const schema = JSON.parse(state.metaData?.schemaString ?? '{}') as { fields: object[] };
    const widened = {
      ...state.metaData,
      schemaString: JSON.stringify({
        ...schema,
        fields: [...schema.fields, { name: 'note', type: 'string', nullable: true, metadata: {} }],
      }),
    };
    const put = t.delta.putCommitIfAbsent.bind(t.delta);
    let raced = false;
    t.delta.putCommitIfAbsent = async (version, body) => {
      if (!raced) {
        raced = true;
        await put(version, foreign('ADD COLUMNS', { metaData: widened }));
      }
      return put(version, body);
    };
    await catchUp(t.sink());
    // Its commit at 2 extends the other writer's schema (note), not the one it had read before (no note).
    const metaData = lines(t.delta, 2).find((a) => a.metaData)?.metaData;
    const names = (JSON.parse(String(metaData?.schemaString)) as { fields: { name: string }[] }).fields.map(
      (f) => f.name,
    );
    expect(names).toEqual(['id', 'note', 'color', '_rescued_data', '_source_file', '_manifest_version']);
    expect(await rows(t.delta)).toEqual(['1@1', '2@2']);
  });

  it('stops, loudly and without writing, on a protocol it cannot write (deletion vectors enabled)', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    await catchUp(t.sink());
    t.delta.commits.set(
      1,
      foreign('SET TBLPROPERTIES', {
        protocol: {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ['deletionVectors'],
          writerFeatures: ['deletionVectors'],
        },
      }),
    );
    t.commit(2, ['{"id":2}']);
    await expect(catchUp(t.sink())).rejects.toBeInstanceOf(UnwritableTableError);
    expect(t.delta.commits.size).toBe(2);
    expect(t.delta.dataWrites).toBe(1);
  });

  it('goes on writing a table another writer moved to table features it implements, and keeps them', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    await catchUp(t.sink());
    // delta-rs or Spark upgrading the table (e.g. for timestamp_ntz): writer 7, the features writer 2 implied.
    const upgraded = {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['timestampNtz'],
      writerFeatures: ['appendOnly', 'invariants', 'timestampNtz'],
    };
    t.delta.commits.set(1, foreign('UPGRADE PROTOCOL', { protocol: upgraded }));
    t.commit(2, ['{"id":2,"color":"red"}']);
    await catchUp(t.sink());
    expect(lines(t.delta, 2).some((a) => a.protocol)).toBe(false);
    expect((await loadSnapshot(t.delta)).state.protocol).toEqual(upgraded);
    expect(await rows(t.delta)).toEqual(['1@1', '2@2']);
  });
});

describe('the protocol a commit sets, against the table it finds', () => {
  const ntz: TableSchema = [{ name: 'local', type: 'timestamp_ntz' }];
  const plain: TableSchema = [{ name: 'id', type: 'long' }];

  it('adds timestampNtz to the features another writer listed, removing none', () => {
    expect(
      protocolChange({ minReaderVersion: 1, minWriterVersion: 7, writerFeatures: ['appendOnly'] }, ntz),
    ).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['timestampNtz'],
      writerFeatures: ['appendOnly', 'timestampNtz'],
    });
    expect(
      protocolChange(
        {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ['timestampNtz'],
          writerFeatures: ['timestampNtz'],
        },
        ntz,
      ),
    ).toBeUndefined();
    expect(protocolChange({ minReaderVersion: 1, minWriterVersion: 2 }, plain)).toBeUndefined();
  });

  it('is refused when the table lists a feature the sink does not implement, or a legacy version past 2', () => {
    expect(protocolProblems({ minReaderVersion: 1, minWriterVersion: 2 })).toEqual([]);
    expect(
      protocolProblems({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['timestampNtz'],
        writerFeatures: ['appendOnly', 'invariants', 'timestampNtz'],
      }),
    ).toEqual([]);
    expect(
      protocolProblems({ minReaderVersion: 1, minWriterVersion: 7, writerFeatures: ['rowTracking'] }),
    ).toEqual(['its protocol has writer features this sink does not implement: rowTracking']);
    expect(protocolProblems({ minReaderVersion: 1, minWriterVersion: 4 })).toHaveLength(1);
    expect(protocolProblems({ minReaderVersion: 2, minWriterVersion: 5 })).toHaveLength(2);
  });
});

describe('a 409 on the commit put (F17)', () => {
  it('is mapped to conflict by the S3 adapter, 412 to exists', async () => {
    const answer = (status: number, name: string) =>
      ({
        send: async () => {
          throw Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
        },
      }) as unknown as S3Client;
    const put = (client: S3Client) => new S3DeltaStore(client, 'b', 't/_bronze').putCommitIfAbsent(0, '{}');
    expect(await put(answer(409, 'ConditionalRequestConflict'))).toBe('conflict');
    expect(await put(answer(412, 'PreconditionFailed'))).toBe('exists');
  });

  it('is a conflict to retry, not a commit that exists', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    const put = t.delta.putCommitIfAbsent.bind(t.delta);
    let conflicts = 2;
    t.delta.putCommitIfAbsent = async (version, body) => {
      if (conflicts > 0) {
        conflicts -= 1;
        return 'conflict';
      }
      return put(version, body);
    };
    expect(await catchUp(t.sink())).toMatchObject({ written: [0], caughtUp: true });
    expect(parseCommit('t', t.delta.commits.get(0) ?? '')).toMatchObject({ ours: true, manifestVersion: 1 });
    expect(conflicts).toBe(0);
  });
});

describe('a changed location (F19)', () => {
  it('refuses to write into a location whose log does not hold what the cursor says; nothing is written there', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    t.commit(2, ['{"id":2}']);
    await catchUp(t.sink());
    t.commit(3, ['{"id":3}']);
    const moved = new MemoryDelta();
    await expect(
      catchUp(t.sink({ location: 's3://lake/bronze/t', deltaAt: () => moved })),
    ).rejects.toBeInstanceOf(SinkTableMismatchError);
    expect(moved.commits.size).toBe(0);
    expect(moved.files.size).toBe(0);
  });

  it('continues at the new location when the table was copied there whole', async () => {
    const t = setup();
    t.commit(1, ['{"id":1}']);
    await catchUp(t.sink());
    t.commit(2, ['{"id":2}']);
    const copy = new MemoryDelta();
    for (const [k, v] of t.delta.commits) copy.commits.set(k, v);
    for (const [k, v] of t.delta.files) copy.files.set(k, v);
    expect(await catchUp(t.sink({ location: 's3://lake/bronze/t', deltaAt: () => copy }))).toMatchObject({
      written: [1],
    });
    expect(await t.cursors.get('t')).toMatchObject({ manifestVersion: 2, location: 's3://lake/bronze/t' });
    expect(await rows(copy)).toEqual(['1@1', '2@2']);
  });
});

describe('a table written by the sink before parts and txn idempotency', () => {
  it('continues where it is: manifest version v at Delta version v-1, its cursor item with a schema', async () => {
    const t = setup();
    // The old sink's commits: one per manifest version, `txn` = manifest version, schema in metaData.
    let previous: ReturnType<typeof parseCommit>['metaData'];
    for (const v of [1, 2]) {
      t.commit(v, [`{"id":${v}}`]);
      const body = buildCommit({
        table: 't',
        location: 's3://mb/t/_bronze',
        manifestVersion: v,
        batchIds: [`B${v}`],
        sourceFiles: { from: 0, to: 1, of: 1 },
        previous,
        schema: [{ name: 'id', type: 'long' }],
        schemaChanged: false,
        files: [],
        missingSources: [],
        timestamp: 0,
      });
      previous ??= parseCommit('t', body).metaData;
      t.delta.commits.set(v - 1, body);
    }
    // Its cursor item: `deltaVersion` and the schema as JSON, no manifest version.
    const legacy = cursorFromItem('t', {
      deltaVersion: 1,
      schema: JSON.stringify([{ name: 'id', type: 'long' }]),
      rows: 2,
      rescued: 0,
    });
    expect(legacy).toEqual({
      table: 't',
      manifestVersion: 2,
      filesDone: 0,
      deltaVersion: 1,
      rows: 2,
      rescued: 0,
    });
    t.cursors.items.set('t', legacy);
    t.commit(3, ['{"id":3}']);

    expect(await catchUp(t.sink())).toMatchObject({ written: [2], versions: [3] });
    expect(t.delta.commits.has(2)).toBe(true);
    expect(parseCommit('t', t.delta.commits.get(2) ?? '')).toMatchObject({ manifestVersion: 3 });
    expect(t.delta.commits.get(2)).not.toContain('"metaData"');
    expect(await t.cursors.get('t')).toMatchObject({ manifestVersion: 3, deltaVersion: 2, rows: 3 });
    expect(logKey(2)).toBe('_delta_log/00000000000000000002.json');
  });
});

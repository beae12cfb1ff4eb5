// Which write of a landing key the bronze sink reads and cleanSource removes (docs/bronze.md, "Which write
// the sink reads"), on the emulator: moto 5.2.5 honours If-Match on GetObject, HeadObject and DeleteObject,
// so these run the real conditional requests (CopySourceIfMatch it ignores: docs/emulator.md; the unit
// tests' S3 fake enforces that one).
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { DynamoDbFileClaims } from '../../shared/bronze/aws/dynamodb-file-claims.ts';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3LandingCleaner } from '../../shared/bronze/aws/s3-landing-cleaner.ts';
import { S3SourceObjects } from '../../shared/bronze/aws/s3-source-objects.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import type { PipelineConfigInput } from '../../shared/config/pipeline-config.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import type { ObjectRef } from '../../shared/ingestion/model.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { testClients, uniqueName } from '../support/aws.ts';
import { PipelineHarness } from '../support/harness.ts';

const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));
const DAY = 24 * 60 * 60 * 1000;

type TableInput = PipelineConfigInput['tables'][number];

async function setup(table: Partial<TableInput>, others: TableInput[] = []) {
  const clients = testClients();
  clientSets.push(clients);
  const config = {
    tables: [
      {
        name: 'events',
        prefix: 'events/',
        bronze: { format: 'jsonl' as const, cleanSource: { action: 'delete' as const, retentionDays: 8 } },
        ...table,
      },
      ...others,
    ],
  };
  const h = await PipelineHarness.create(clients, { config, countRequests: false });
  let now = Date.now();
  // The sink's ports sign as its role: every read, conditional delete and claim lookup is checked against
  // the grants the stack gives it for this configuration (docs/security.md).
  const role = h.clientsOf('Sink');
  const tableName = h.resources.ledgerTable;
  const cursors = new DynamoDbSinkCursorStore({ client: role.dynamodb, tableName });
  const sink = new SinkTable({
    config: h.config,
    store: new S3BatchStore({ client: role.s3, bucket: h.resources.manifestBucket }),
    sources: new S3SourceObjects(role.s3),
    deltaAt: (bucket, prefix) => new S3DeltaStore(role.s3, bucket, prefix),
    cursors,
    cleaner: new S3LandingCleaner(role.s3),
    claims: new DynamoDbFileClaims({ client: role.dynamodb, tableName }),
    manifestBucket: h.resources.manifestBucket,
    log: silentLog,
    now: () => now,
  });
  const landing = h.resources.landingBucket;
  const body = (key: string) =>
    clients.s3.send(new GetObjectCommand({ Bucket: landing, Key: key })).then(
      (r) => r.Body?.transformToString(),
      (e: Error) => (e.name === 'NoSuchKey' ? undefined : Promise.reject(e)),
    );
  const commit = (v: number) =>
    new S3DeltaStore(clients.s3, h.resources.manifestBucket, 'events/_bronze').getCommit(v);
  return {
    h,
    sink,
    body,
    commit,
    catchUp: (table = 'events') => sink.catchUp(table, Number.POSITIVE_INFINITY),
    days: (n: number) => {
      now += n * DAY;
    },
  };
}

const rowsOf = (commit: string | undefined) =>
  Number(/"numOutputRows":"(\d+)"/.exec(commit ?? '')?.[1] ?? Number.NaN);

describe('the write the manifest names, on the emulator', () => {
  it('path identity: a rewrite after the sink read the key survives cleanSource (it is no write the table read)', async () => {
    const t = await setup({});
    await t.h.put('events/k.json', '{"v":1}\n');
    await t.h.runUntilQuiet();
    expect(await t.catchUp()).toMatchObject({ written: [0], cleaned: [] });
    // The producer writes the key again: under path identity a duplicate, never ingested.
    await t.h.put('events/k.json', '{"v":2}\n{"v":2}\n');
    await t.h.runUntilQuiet();
    t.days(9);
    const outcome = await t.catchUp();
    expect(outcome).toMatchObject({ cleaned: [1], cleanedFiles: 0, cleanLeft: 1 });
    expect(await t.body('events/k.json')).toBe('{"v":2}\n{"v":2}\n');
  });

  it('path identity: the write the sink read is removed once past retention', async () => {
    const t = await setup({});
    await t.h.put('events/k.json', '{"v":1}\n');
    await t.h.runUntilQuiet();
    t.days(9);
    expect(await t.catchUp()).toMatchObject({ written: [0], cleaned: [1], cleanedFiles: 1 });
    expect(await t.body('events/k.json')).toBeUndefined();
  });

  it('allowOverwrites without versions: each version reads its own write, never the later one twice', async () => {
    const t = await setup({ allowOverwrites: true });
    await t.h.put('events/k.json', '{"v":1}\n');
    await t.h.runUntilQuiet();
    await t.h.put('events/k.json', '{"v":2}\n{"v":2}\n');
    await t.h.runUntilQuiet();
    // The sink comes after both writes: version 1's write is gone, so it is missing, not the second's rows.
    expect(await t.catchUp()).toMatchObject({ written: [0, 1] });
    expect(rowsOf(await t.commit(0))).toBe(0);
    expect(await t.commit(0)).toContain('"missingSources":["s3://');
    expect(rowsOf(await t.commit(1))).toBe(2);
    // Past retention: version 1's file was not read, so nothing of it is removed; version 2's write is.
    t.days(9);
    expect(await t.catchUp()).toMatchObject({ cleaned: [1, 2], cleanedFiles: 1 });
    expect(await t.body('events/k.json')).toBeUndefined();
  });
});

describe('cleanSource with two tables over one prefix, on the emulator', () => {
  it("waits until the other table's Delta table holds a file before removing it: that table never misses it", async () => {
    const t = await setup(
      { bronze: { format: 'jsonl', cleanSource: { action: 'delete', retentionDays: 8 } } },
      [{ name: 'audit', prefix: 'events/', bronze: { format: 'jsonl' } }],
    );
    await t.h.put('events/k.json', '{"v":1}\n');
    await t.h.runUntilQuiet();
    t.days(9);
    // `audit` claimed and committed the file but its sink has not run: `events` may not remove it yet.
    expect(await t.catchUp()).toMatchObject({ written: [0], cleaned: [], cleanedFiles: 0 });
    expect(await t.body('events/k.json')).toBe('{"v":1}\n');
    expect(await t.catchUp('audit')).toMatchObject({ written: [0] });
    const audit = await new S3DeltaStore(
      t.h.clients.s3,
      t.h.resources.manifestBucket,
      'audit/_bronze',
    ).getCommit(0);
    expect(rowsOf(audit)).toBe(1);
    expect(audit).toContain('"missingSources":[]');
    // Now both tables hold it.
    expect(await t.catchUp()).toMatchObject({ cleaned: [1], cleanedFiles: 1 });
    expect(await t.body('events/k.json')).toBeUndefined();
  });
});

describe('S3SourceObjects and S3LandingCleaner on the emulator', () => {
  const clients = testClients();
  clientSets.push(clients);
  const bucket = uniqueName('writes');
  const versioned = uniqueName('writes-v');
  const ready = (async () => {
    for (const Bucket of [bucket, versioned]) await clients.s3.send(new CreateBucketCommand({ Bucket }));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: versioned, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  })();
  const put = async (Bucket: string, Key: string, Body: string): Promise<ObjectRef> => {
    await ready;
    const out = await clients.s3.send(new PutObjectCommand({ Bucket, Key, Body }));
    return {
      bucket: Bucket,
      key: Key,
      size: Body.length,
      eTag: out.ETag ?? null,
      versionId: out.VersionId ?? null,
      sequencer: null,
      eventTime: new Date().toISOString(),
    };
  };
  const text = async (read: { kind: string; body?: unknown }) => {
    if (read.kind !== 'found') return read;
    let all = '';
    for await (const chunk of read.body as AsyncIterable<Uint8Array>) all += Buffer.from(chunk).toString();
    return all;
  };
  const sources = new S3SourceObjects(clients.s3);

  it('a missing landing bucket fails the read (retried, loud) instead of reading as a deleted file', async () => {
    const ref = { ...(await put(bucket, 'k', 'x')), bucket: uniqueName('no-such-bucket') };
    await expect(sources.open(ref, 'path')).rejects.toThrow(/NoSuchBucket/);
    await expect(sources.openRandom(ref, 'path')).rejects.toThrow(/NoSuchBucket/);
  });

  it('a deleted key reads as missing with its reason, by GET and by HEAD (whose 404 has no code)', async () => {
    const ref = await put(bucket, 'gone', 'x');
    await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'gone' }));
    expect(await sources.open(ref, 'path')).toMatchObject({ kind: 'missing', reason: 'deleted' });
    expect(await sources.openRandom(ref, 'path')).toMatchObject({ kind: 'missing', reason: 'deleted' });
  });

  it("write identity reads only the manifest's ETag: a rewrite is 'overwritten', never read", async () => {
    const ref = await put(bucket, 'w', 'first');
    await put(bucket, 'w', 'second');
    expect(await sources.open(ref, 'write')).toMatchObject({ kind: 'missing', reason: 'overwritten' });
    expect(await sources.openRandom(ref, 'write')).toMatchObject({ kind: 'missing', reason: 'overwritten' });
    // Path identity reads the rewrite, and says it is not the manifest's write.
    const read = await sources.open(ref, 'path');
    expect(read).toMatchObject({ kind: 'found', asNamed: false });
    expect(await text(read)).toBe('second');
  });

  it("an expired version: path identity reads the key's current object, write identity records it gone", async () => {
    const ref = await put(versioned, 'v', 'first');
    await put(versioned, 'v', 'second');
    await clients.s3.send(
      new DeleteObjectCommand({ Bucket: versioned, Key: 'v', VersionId: ref.versionId ?? '' }),
    );
    const path = await sources.open(ref, 'path');
    expect(path).toMatchObject({ kind: 'found', asNamed: false });
    expect(await text(path)).toBe('second');
    expect(await sources.open(ref, 'write')).toMatchObject({ kind: 'missing', reason: 'version-gone' });
  });

  it('deletes only the write named: a rewrite is left (412), an absent key is gone', async () => {
    const cleaner = new S3LandingCleaner(clients.s3);
    const ref = await put(bucket, 'd', 'first');
    await put(bucket, 'd', 'second');
    expect(await cleaner.remove(ref)).toMatchObject({ kind: 'left' });
    const current = await put(bucket, 'd', 'third');
    expect(await cleaner.remove(current)).toEqual({ kind: 'removed' });
    expect(await cleaner.remove(current)).toEqual({ kind: 'gone' });
  });

  it('a move into a bucket that does not exist fails, and leaves the source (NoSuchBucket is no "gone")', async () => {
    const cleaner = new S3LandingCleaner(clients.s3);
    const ref = await put(bucket, 'm', 'x');
    const to = { bucket: uniqueName('no-archive'), prefix: 'old', perWrite: false };
    await expect(cleaner.move(ref, to)).rejects.toThrow(/NoSuchBucket/);
    expect(await sources.open(ref, 'write')).toMatchObject({ kind: 'found' });
  });

  it('archives under <moveTo>/<source bucket>/<key>, and each write of an allowOverwrites key apart', async () => {
    const cleaner = new S3LandingCleaner(clients.s3);
    const archive = uniqueName('archive');
    await clients.s3.send(new CreateBucketCommand({ Bucket: archive }));
    const first = await put(versioned, 'a.json', 'first');
    const second = await put(versioned, 'a.json', 'second');
    const to = { bucket: archive, prefix: 'old', perWrite: true };
    expect(await cleaner.move(first, to)).toEqual({ kind: 'removed' });
    expect(await cleaner.move(second, to)).toEqual({ kind: 'removed' });
    const read = (Key: string) =>
      clients.s3
        .send(new GetObjectCommand({ Bucket: archive, Key }))
        .then((r) => r.Body?.transformToString());
    expect(await read(`old/${versioned}/v=${first.versionId}/a.json`)).toBe('first');
    expect(await read(`old/${versioned}/v=${second.versionId}/a.json`)).toBe('second');
  });
});

import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { S3LandingCleaner } from '../../shared/bronze/aws/s3-landing-cleaner.ts';
import type { ObjectRef } from '../../shared/ingestion/model.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { functionClients } from '../support/iam.ts';

const MiB = 1024 ** 2;
const clients = testClients();
afterAll(() => destroyClients(clients));
const landing = uniqueName('move-landing');
const archive = uniqueName('move-archive');
const versioned = uniqueName('move-versioned');
// S3 (and moto at CompleteMultipartUpload) wants every part but the last to be at least 5 MiB.
const small = { singleCopyMaxBytes: 5 * MiB, partBytes: 5 * MiB };
/** moveTo `s3://<archive>/old`: archive keys are `old/<landing bucket>/<key>`. */
const old = { bucket: archive, prefix: 'old', perWrite: false };

/** The bronze sink's S3 client: it signs as the sink's role of a stack whose tables move from these buckets. */
let sink: S3Client = clients.s3;

beforeAll(async () => {
  for (const Bucket of [landing, archive, versioned])
    await clients.s3.send(new CreateBucketCommand({ Bucket }));
  await clients.s3.send(
    new PutBucketVersioningCommand({ Bucket: versioned, VersioningConfiguration: { Status: 'Enabled' } }),
  );
  const move = (bucket: string, name: string, to: string) => ({
    name,
    prefix: 'events/',
    bucket,
    bronze: { format: 'jsonl', cleanSource: { action: 'move', moveTo: `s3://${archive}/${to}` } },
  });
  const none = { url: 'none' };
  const roles = await functionClients({
    label: 'landing-move',
    context: { 'inlet:tables': [move(landing, 'events', 'old'), move(versioned, 'versioned', 'v')] },
    resources: {
      ledgerTable: 'none',
      landingBucket: 'none',
      manifestBucket: 'none',
      ingestQueue: none,
      ingestDlq: none,
      commitQueue: none,
      commitDlq: none,
    },
    target: testTarget,
  });
  if (roles) sink = roles.of('Sink').s3;
});

async function landingFile(
  key: string,
  body: Uint8Array,
  options: { bucket?: string; tagging?: string } = {},
): Promise<ObjectRef> {
  const bucket = options.bucket ?? landing;
  const put = await clients.s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: body,
      ContentType: 'application/x-ndjson',
      Tagging: options.tagging,
    }),
  );
  const head = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  return {
    bucket,
    key,
    size: body.length,
    eTag: head.ETag ?? null,
    versionId: put.VersionId ?? null,
    sequencer: null,
    eventTime: new Date().toISOString(),
  };
}

const read = (bucket: string, key: string) =>
  clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(
    async (r) => ({ bytes: Buffer.from((await r.Body?.transformToByteArray()) ?? []), type: r.ContentType }),
    (e: Error) => (e.name === 'NoSuchKey' ? undefined : Promise.reject(e)),
  );

const tagsOf = async (bucket: string, key: string) =>
  Object.fromEntries(
    ((await clients.s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }))).TagSet ?? []).map(
      (t) => [t.Key, t.Value],
    ),
  );

const uploadsTo = async (key: string) =>
  (await clients.s3.send(new ListMultipartUploadsCommand({ Bucket: archive, Prefix: key }))).Uploads ?? [];

describe('cleanSource move in parts on the emulator', () => {
  it('moves an 11 MiB file in three parts (key with space, + and unicode) and a repeat finds it gone', async () => {
    const key = 'events/big a+b é.jsonl';
    const body = randomBytes(11 * MiB);
    const ref = await landingFile(key, body);
    const cleaner = new S3LandingCleaner(sink, small);
    expect(await cleaner.move(ref, old)).toEqual({
      kind: 'removed',
    });
    const moved = await read(archive, `old/${landing}/${key}`);
    expect(moved?.bytes.equals(body)).toBe(true);
    expect(moved?.type).toBe('application/x-ndjson');
    // A multipart object's ETag ends in -<parts>: the copy really went in parts.
    const head = await clients.s3.send(
      new HeadObjectCommand({ Bucket: archive, Key: `old/${landing}/${key}` }),
    );
    expect(head.ETag).toMatch(/-3"$/);
    expect(await read(landing, key)).toBeUndefined();
    expect(await cleaner.move(ref, old)).toEqual({
      kind: 'gone',
    });
  });

  it("keeps the source's tags, keys and values with space, +, =, / and unicode (the characters S3 allows in tags)", async () => {
    const key = 'events/tagged.jsonl';
    const body = randomBytes(11 * MiB);
    const tags = { team: 'a b+c', 'k=1': 'é/ü:@', empty: '' };
    const tagging = Object.entries(tags)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');
    const ref = await landingFile(key, body, { tagging });
    expect(await tagsOf(landing, key)).toEqual(tags);
    expect(await new S3LandingCleaner(sink, small).move(ref, old)).toEqual({
      kind: 'removed',
    });
    const head = await clients.s3.send(
      new HeadObjectCommand({ Bucket: archive, Key: `old/${landing}/${key}` }),
    );
    expect(head.ETag).toMatch(/-3"$/);
    expect(await tagsOf(archive, `old/${landing}/${key}`)).toEqual(tags);
  });

  it('takes the tags of the version the manifest names, not of a newer one', async () => {
    const key = 'events/versioned.jsonl';
    const body = randomBytes(11 * MiB);
    const ref = await landingFile(key, body, { bucket: versioned, tagging: 'stage=raw' });
    expect(ref.versionId).toBeTruthy();
    // Rewritten since its event, with other tags: the move must still archive the manifest's version.
    await landingFile(key, Buffer.from('newer'), { bucket: versioned, tagging: 'stage=rewritten' });
    expect(
      await new S3LandingCleaner(sink, small).move(ref, {
        bucket: archive,
        prefix: 'v',
        perWrite: false,
      }),
    ).toEqual({
      kind: 'removed',
    });
    expect((await read(archive, `v/${versioned}/${key}`))?.bytes.equals(body)).toBe(true);
    expect(await tagsOf(archive, `v/${versioned}/${key}`)).toEqual({ stage: 'raw' });
  });

  it('a failed part aborts the upload and keeps the source; the replay moves it', async () => {
    const key = 'events/crash.jsonl';
    const body = randomBytes(12 * MiB);
    const ref = await landingFile(key, body);
    let copies = 0;
    const failing = {
      send: (command: Parameters<S3Client['send']>[0]) => {
        if (command instanceof UploadPartCopyCommand && ++copies === 2)
          return Promise.reject(Object.assign(new Error('injected'), { $metadata: { httpStatusCode: 500 } }));
        return sink.send(command);
      },
    } as unknown as S3Client;
    await expect(new S3LandingCleaner(failing, { ...small, concurrency: 1 }).move(ref, old)).rejects.toThrow(
      'injected',
    );
    expect(await uploadsTo(`old/${landing}/${key}`)).toEqual([]);
    expect(await read(archive, `old/${landing}/${key}`)).toBeUndefined();
    expect((await read(landing, key))?.bytes.equals(body)).toBe(true);
    expect(await new S3LandingCleaner(sink, small).move(ref, old)).toEqual({
      kind: 'removed',
    });
    expect((await read(archive, `old/${landing}/${key}`))?.bytes.equals(body)).toBe(true);
    expect(await read(landing, key)).toBeUndefined();
  });
});

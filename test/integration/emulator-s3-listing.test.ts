/**
 * The emulator's launcher answers ListObjectsV2 from a sorted index of each bucket's keys
 * (local/moto_s3_listing.py: moto sorted the whole bucket for every page, O(n^2 / 1,000) to list it). What the
 * backfill, the inventory and the bench's naive loader rely on must stay as S3 answers it: UTF-8 binary order,
 * continuation across changes made between pages, common prefixes and keys sharing MaxKeys, StartAfter,
 * delete markers hidden. Against any target; the last test compares the launcher with moto's own listing on
 * random buckets (test/integration/emulator_s3_listing.py).
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  type ListObjectsV2CommandOutput,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { launcherCheck } from './emulator-python-check.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

async function bucketWith(keys: readonly string[], versioned = false): Promise<string> {
  const bucket = uniqueName('listing');
  await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  if (versioned)
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  for (const key of keys) await put(bucket, key);
  return bucket;
}

const put = (bucket: string, key: string, body = 'x') =>
  clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
const remove = (bucket: string, key: string, versionId?: string) =>
  clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
const list = (input: ListObjectsV2CommandInput) => clients.s3.send(new ListObjectsV2Command(input));

/** A page's entries, keys and common prefixes, in the order S3 gives them (one order for both). */
const entries = (page: ListObjectsV2CommandOutput) =>
  [
    ...(page.Contents ?? []).map((o) => o.Key ?? ''),
    ...(page.CommonPrefixes ?? []).map((p) => p.Prefix ?? ''),
  ].sort(utf8Order);

/** S3's order: "List results are always returned in UTF-8 binary order" (ListObjectsV2, API reference). */
const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Every page of a listing: what each page held, checking KeyCount and IsTruncated on the way. */
async function walk(input: ListObjectsV2CommandInput): Promise<string[][]> {
  const pages: string[][] = [];
  let token = input.ContinuationToken;
  do {
    const page = await list({ ...input, ContinuationToken: token });
    const listed = entries(page);
    expect(page.KeyCount).toBe(listed.length);
    expect(listed.length).toBeLessThanOrEqual(input.MaxKeys ?? 1000);
    expect(page.IsTruncated).toBe(page.NextContinuationToken !== undefined);
    pages.push(listed);
    token = page.NextContinuationToken;
  } while (token);
  return pages;
}

describe('S3 listings on the emulator (the launcher keeps S3 semantics)', () => {
  it('lists keys in UTF-8 binary order, awkward keys and all, page by page', async () => {
    // U+FFFD against an astral-plane character: UTF-16 (JavaScript's sort) orders them the other way.
    const keys = [
      'a',
      'a b',
      'a+b',
      'a%2Fb',
      'a&b<c>"',
      'a/é',
      'a/b',
      'é',
      'z',
      '\uFFFD',
      '\u{1F600}',
      '日本/x',
    ];
    const bucket = await bucketWith(keys);
    const inUtf8 = [...keys].sort(utf8Order);
    expect([...keys].sort()).not.toEqual(inUtf8);

    const pages = await walk({ Bucket: bucket, MaxKeys: 5 });

    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    const listed = (await list({ Bucket: bucket })).Contents?.map((o) => o.Key);
    expect(listed).toEqual(inUtf8);
    expect(pages.flat()).toEqual(inUtf8);
  });

  it('continues after deletes, overwrites and new keys between pages, each key once', async () => {
    const bucket = await bucketWith(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    const first = await list({ Bucket: bucket, MaxKeys: 3 });
    expect(entries(first)).toEqual(['k0', 'k1', 'k2']);

    await remove(bucket, 'k1'); // behind the token: already listed
    await remove(bucket, 'k5'); // ahead: never listed
    await put(bucket, 'k6', 'a longer body'); // ahead, overwritten: listed once, as it is now
    await put(bucket, 'k2', 'rewritten'); // the token's own key: not listed again
    await put(bucket, 'k25'); // ahead, new: listed
    await put(bucket, 'k05'); // behind, new: not listed
    const rest = await walk({ Bucket: bucket, MaxKeys: 3, ContinuationToken: first.NextContinuationToken });

    expect(rest.flat()).toEqual(['k25', 'k3', 'k4', 'k6', 'k7']);
    const k6 = (await list({ Bucket: bucket, Prefix: 'k6' })).Contents;
    expect(k6?.map((o) => [o.Key, o.Size])).toEqual([['k6', 13]]);
  });

  it('walks a delimiter listing: common prefixes and keys share MaxKeys, in one order, each once', async () => {
    // 'p/a!x' sorts before the common prefix 'p/a/' ('!' is below '/'); 'p/a0' after it.
    const keys = ['p/a/1', 'p/a/2', 'p/a!x', 'p/a0', 'p/b/1', 'p/c', 'p/d/1/2', 'p/d/3', 'p/e', 'q/a/1'];
    const bucket = await bucketWith(keys);

    const pages = await walk({ Bucket: bucket, Prefix: 'p/', Delimiter: '/', MaxKeys: 2 });

    expect(pages).toEqual([['p/a!x', 'p/a/'], ['p/a0', 'p/b/'], ['p/c', 'p/d/'], ['p/e']]);
    const page = await list({ Bucket: bucket, Delimiter: '/' });
    expect(page.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['p/', 'q/']);
    expect(page.Contents ?? []).toEqual([]);
    expect(page.KeyCount).toBe(2);
  });

  it('lists only what comes after StartAfter, under the prefix', async () => {
    const bucket = await bucketWith(['a/1', 'b/1', 'b/2', 'b0', 'c/1', 'c/2', 'd']);

    const keys = await list({ Bucket: bucket, StartAfter: 'b/1' });
    const grouped = await list({ Bucket: bucket, StartAfter: 'b0', Delimiter: '/' });
    const prefixed = await list({ Bucket: bucket, Prefix: 'c/', StartAfter: 'a' });

    expect(entries(keys)).toEqual(['b/2', 'b0', 'c/1', 'c/2', 'd']);
    expect(keys.StartAfter).toBe('b/1');
    expect(entries(grouped)).toEqual(['c/', 'd']);
    expect(entries(prefixed)).toEqual(['c/1', 'c/2']);
  });

  it('hides keys whose latest version is a delete marker, and their common prefixes, in a versioned bucket', async () => {
    const bucket = await bucketWith(['v/keep', 'v/gone/x', 'v/back'], true);
    await remove(bucket, 'v/gone/x');
    const marker = await remove(bucket, 'v/back');

    expect(entries(await list({ Bucket: bucket, Prefix: 'v/' }))).toEqual(['v/keep']);
    // S3 derives common prefixes from the keys it would list ("a GET Bucket request does not return
    // objects whose current version is a delete marker", S3 user guide, "Working with delete markers");
    // moto 5.2.5 listed 'v/gone/' here.
    expect(entries(await list({ Bucket: bucket, Prefix: 'v/', Delimiter: '/' }))).toEqual(['v/keep']);

    await remove(bucket, 'v/back', marker.VersionId); // removing the marker makes the key current again
    expect(entries(await list({ Bucket: bucket, Prefix: 'v/' }))).toEqual(['v/back', 'v/keep']);
  });

  it('encodes keys and common prefixes with EncodingType url', async () => {
    const keys = ['enc/é&ü.txt', 'enc/日/1'];
    const bucket = await bucketWith(keys);

    const page = await list({ Bucket: bucket, Prefix: 'enc/', Delimiter: '/', EncodingType: 'url' });

    expect(page.EncodingType).toBe('url');
    expect(page.Contents?.map((o) => decodeURIComponent(o.Key ?? ''))).toEqual(['enc/é&ü.txt']);
    expect(page.CommonPrefixes?.map((p) => decodeURIComponent(p.Prefix ?? ''))).toEqual(['enc/日/']);
    expect(page.Contents?.[0]?.Key).not.toBe('enc/é&ü.txt');
  });

  it.skipIf(testTarget().kind !== 'emulator')(
    "answers as moto's own listing wherever moto answers as S3 does, on random buckets",
    async () => {
      expect(await launcherCheck('emulator_s3_listing.py', 25)).toMatch(/; 0 difference\(s\)$/);
    },
    120_000,
  );
});

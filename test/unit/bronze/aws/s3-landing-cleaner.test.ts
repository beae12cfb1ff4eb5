import { describe, expect, it } from 'vitest';
import { S3LandingCleaner } from '../../../../shared/bronze/aws/s3-landing-cleaner.ts';
import { DEFAULT_PART_BYTES } from '../../../../shared/bronze/copy-plan.ts';
import type { ObjectRef } from '../../../../shared/ingestion/model.ts';
import { type FakeObject, MultipartS3Fake } from './multipart-s3-fake.ts';

const MiB = 1024 ** 2;
const GB6 = 6 * 1000 ** 3;
const to = { bucket: 'archive', prefix: 'old', perWrite: false };
const key = 'in/a b+é.json';
/** The archive key: `<moveTo prefix>/<source bucket>/<key>`. */
const archived = `old/landing/${key}`;

function setup(object: Partial<FakeObject> = {}) {
  const s3 = new MultipartS3Fake();
  const source: FakeObject = { size: GB6, content: 'v1', etag: '"e1"', ...object };
  s3.put('landing', key, source);
  const ref: ObjectRef = {
    bucket: 'landing',
    key,
    size: source.size,
    eTag: source.etag,
    versionId: source.versionId ?? null,
    sequencer: null,
    eventTime: '2026-11-30T00:00:00.000Z',
  };
  return { s3, ref, cleaner: new S3LandingCleaner(s3.client, { concurrency: 4 }) };
}

describe('S3LandingCleaner.move of a file over 5 GB', () => {
  it('copies it in 512 MiB parts, at most `concurrency` at once, keeps its headers, then deletes the source', async () => {
    const { s3, ref, cleaner } = setup({ contentType: 'application/json', metadata: { origin: 'x' } });
    expect(await cleaner.move(ref, to)).toEqual({ kind: 'removed' });
    const parts = Math.ceil(GB6 / DEFAULT_PART_BYTES);
    expect(s3.partCopies).toHaveLength(parts);
    expect(s3.partCopies[0]).toEqual({
      CopySource: 'landing/in/a%20b%2B%C3%A9.json',
      CopySourceIfMatch: '"e1"',
      CopySourceRange: `bytes=0-${DEFAULT_PART_BYTES - 1}`,
    });
    expect(s3.maxInFlight).toBe(4);
    expect(s3.get('archive', archived)).toMatchObject({
      size: GB6,
      content: 'v1',
      contentType: 'application/json',
      metadata: { origin: 'x' },
    });
    expect(s3.get('landing', key)).toBeUndefined();
    expect(s3.calls.at(-2)).toBe('CompleteMultipartUpload');
    expect(s3.calls.at(-1)).toBe('DeleteObject');
    expect(s3.uploads.size).toBe(0);
  });

  it('copies a file the manifest names by version from that version, without an ETag condition', async () => {
    const { s3, ref, cleaner } = setup({ versionId: 'v/7' });
    expect(await cleaner.move(ref, to)).toEqual({ kind: 'removed' });
    expect(new Set(s3.partCopies.map((p) => [p.CopySource, p.CopySourceIfMatch].join()))).toEqual(
      new Set(['landing/in/a%20b%2B%C3%A9.json?versionId=v%2F7,']),
    );
    expect(s3.get('archive', archived)?.content).toBe('v1');
  });

  it("keeps the source's tags, sent URL-encoded on the create (space, +, =, /, : and unicode survive)", async () => {
    const tags = { team: 'a b+c', 'k=1': 'é/ü:@', empty: '' };
    const { s3, ref, cleaner } = setup({ tags });
    expect(await cleaner.move(ref, to)).toEqual({ kind: 'removed' });
    expect(s3.get('archive', archived)?.tags).toEqual(tags);
    expect(s3.tagReads).toEqual([{ Key: key, VersionId: undefined }]);
  });

  it('reads the tags of the version the manifest names, not of the current object', async () => {
    const { s3, ref, cleaner } = setup({ versionId: 'v/7', tags: { stage: 'raw' } });
    expect(await cleaner.move(ref, to)).toEqual({ kind: 'removed' });
    expect(s3.tagReads).toEqual([{ Key: key, VersionId: 'v/7' }]);
    expect(s3.get('archive', archived)?.tags).toEqual({ stage: 'raw' });
  });

  it('sends no tag header for a source without tags, and a 5 GB file keeps its tags through CopyObject', async () => {
    const untagged = setup();
    let tagging: unknown = 'unset';
    untagged.s3.before = (call, input) => {
      if (call === 'CreateMultipartUpload') tagging = input.Tagging;
    };
    expect(await untagged.cleaner.move(untagged.ref, to)).toEqual({ kind: 'removed' });
    expect(tagging).toBeUndefined();
    const small = setup({ size: 5 * 1024 ** 3, tags: { team: 'x' } });
    expect(await small.cleaner.move(small.ref, to)).toEqual({ kind: 'removed' });
    expect(small.s3.calls).toEqual(['CopyObject', 'DeleteObject']);
    expect(small.s3.get('archive', archived)?.tags).toEqual({ team: 'x' });
  });

  it('leaves a file rewritten mid-copy in place, aborts the upload, and never archives or deletes the rewrite', async () => {
    const { s3, ref, cleaner } = setup();
    s3.afterPart = (n) => {
      if (n === 2) s3.put('landing', key, { size: GB6 + 1, content: 'v2', etag: '"e2"' });
    };
    // The write the table read is gone: every part is pinned to its ETag, so the copy fails (412).
    expect(await cleaner.move(ref, to)).toMatchObject({ kind: 'left' });
    expect(s3.get('archive', archived)).toBeUndefined();
    expect(s3.get('landing', key)?.content).toBe('v2');
    expect(s3.uploads.size).toBe(0);
    expect(s3.aborted).toBe(1);
    // A replay finds the rewrite at the key: left again, still not archived (it is not the write read).
    s3.afterPart = undefined;
    expect(await cleaner.move(ref, to)).toMatchObject({ kind: 'left' });
    expect(s3.get('archive', archived)).toBeUndefined();
    expect(s3.get('landing', key)?.content).toBe('v2');
  });

  it('waits for the parts in flight before it aborts, and starts no new part after a failure', async () => {
    const { s3, ref, cleaner } = setup();
    let inFlightAtAbort = -1;
    s3.before = (call, input) => {
      if (call === 'UploadPartCopy' && input.PartNumber === 3)
        throw Object.assign(new Error('InternalError'), {
          name: 'InternalError',
          $metadata: { httpStatusCode: 500 },
        });
      if (call === 'AbortMultipartUpload') inFlightAtAbort = s3.inFlight;
    };
    await expect(cleaner.move(ref, to)).rejects.toThrow('InternalError');
    expect(inFlightAtAbort).toBe(0);
    // Parts 1, 2 and 4 were in flight with 3; none after.
    expect(s3.calls.filter((c) => c === 'UploadPartCopy')).toHaveLength(4);
    expect(s3.uploads.size).toBe(0);
    expect(s3.get('landing', key)).toBeDefined();
  });

  it('is done when the source is gone before or during the copy (another run moved it), not when the upload is gone', async () => {
    const before = setup();
    before.s3.objects.clear();
    expect(await before.cleaner.move(before.ref, to)).toEqual({ kind: 'gone' });
    const during = setup();
    during.s3.afterPart = () => during.s3.objects.delete(`landing/${key}`);
    expect(await during.cleaner.move(during.ref, to)).toEqual({ kind: 'gone' });
    expect(during.s3.uploads.size).toBe(0);
    const beforeTags = setup();
    beforeTags.s3.before = (call) => {
      if (call === 'GetObjectTagging') beforeTags.s3.objects.delete(`landing/${key}`);
    };
    expect(await beforeTags.cleaner.move(beforeTags.ref, to)).toEqual({ kind: 'gone' });
    expect(beforeTags.s3.calls).not.toContain('CreateMultipartUpload');
    const noUpload = setup();
    noUpload.s3.afterPart = () => noUpload.s3.uploads.clear();
    await expect(noUpload.cleaner.move(noUpload.ref, to)).rejects.toThrow('NoSuchUpload');
    expect(noUpload.s3.get('landing', key)).toBeDefined();
  });

  it('survives a crash before any call: the source stays until the archive is complete, and a replay finishes', async () => {
    const tags = { team: 'a b' };
    const calls = (() => {
      const { s3, ref, cleaner } = setup({ tags });
      return cleaner.move(ref, to).then(() => s3.calls.length);
    })();
    const total = await calls;
    // Head, tags, create, 12 parts, complete, delete.
    expect(total).toBe(17);
    for (let crashAt = 0; crashAt < total; crashAt++) {
      const { s3, ref, cleaner } = setup({ tags });
      let dead = false;
      s3.before = () => {
        // A crash: this call and every later one of this run never happen (no abort either).
        if (dead || s3.calls.length - 1 === crashAt) {
          dead = true;
          throw new Error('crash');
        }
      };
      await expect(cleaner.move(ref, to)).rejects.toThrow();
      const copy = s3.get('archive', archived);
      if (s3.get('landing', key) === undefined) expect(copy?.content).toBe('v1');
      if (copy) expect(copy).toMatchObject({ content: 'v1', size: GB6, tags });
      const leftBehind = s3.uploads.size;
      s3.before = undefined;
      expect(await cleaner.move(ref, to), `crash at call ${crashAt}`).toEqual({ kind: 'removed' });
      expect(s3.get('archive', archived)).toMatchObject({ content: 'v1', size: GB6, tags });
      expect(s3.get('landing', key)).toBeUndefined();
      // A crash mid-upload leaves that one upload to the bucket's lifecycle rule; the replay leaves none.
      expect(s3.uploads.size).toBe(leftBehind);
      expect(leftBehind).toBeLessThanOrEqual(1);
    }
  });

  it('moves in parts a file the manifest lists smaller than it is, once CopyObject refuses it over 5 GB', async () => {
    const { s3, ref, cleaner } = setup({ size: GB6, content: 'v2' });
    expect(await cleaner.move({ ...ref, size: 100 }, to)).toEqual({ kind: 'removed' });
    expect(s3.calls.slice(0, 4)).toEqual([
      'CopyObject',
      'HeadObject',
      'GetObjectTagging',
      'CreateMultipartUpload',
    ]);
    expect(s3.get('archive', archived)).toMatchObject({ content: 'v2', size: GB6 });
    expect(s3.get('landing', key)).toBeUndefined();
  });

  it('still moves a file of 5 GB or less with one CopyObject, and refuses a threshold under 5 MiB', async () => {
    const { s3, ref, cleaner } = setup({ size: 5 * 1024 ** 3 });
    expect(await cleaner.move(ref, to)).toEqual({ kind: 'removed' });
    expect(s3.calls).toEqual(['CopyObject', 'DeleteObject']);
    expect(() => new S3LandingCleaner(s3.client, { singleCopyMaxBytes: 5 * MiB - 1 })).toThrow(RangeError);
  });
});

import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ObjectRef } from '../../ingestion/model.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import { absenceOf, quotedETag, sameETag, versionOf } from '../landing-write.ts';
import type { MissingReason, RandomAccessObject, ReadIdentity, SourceObjects, SourceRead } from '../ports.ts';

/** The request naming one write: its version, else (for `write` reads) its ETag as a precondition. */
function named(ref: ObjectRef, identity: ReadIdentity) {
  const VersionId = versionOf(ref) ?? undefined;
  const IfMatch = VersionId === undefined && identity === 'write' ? quotedETag(ref.eTag) : undefined;
  return { Bucket: ref.bucket, Key: ref.key, VersionId, IfMatch };
}

type Missing = Extract<SourceRead<never>, { kind: 'missing' }>;
const missing = (reason: MissingReason, error: unknown): Missing => ({
  kind: 'missing',
  reason,
  detail: `${(error as Error).name}: ${(error as Error).message}`,
});

/**
 * Landing objects, read as the table's identity says (docs/bronze.md, "Which write the sink reads"): the
 * manifest's version when it names one; for `write` tables otherwise only while the key still has the
 * manifest's ETag (`If-Match`), for `path` tables what the key holds now. A missing bucket is an error
 * (the landing bucket renamed or deleted is not "this file was deleted").
 */
export class S3SourceObjects implements SourceObjects {
  constructor(private readonly client: S3Client) {}

  async open(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<AsyncIterable<Uint8Array>>> {
    const request = named(ref, identity);
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(new GetObjectCommand(request));
    } catch (error) {
      const fallback = await this.whenAbsent(ref, identity, error);
      if (fallback === 'current')
        return this.asRewrite(await this.open({ ...ref, versionId: null }, identity));
      return fallback;
    }
    const body = response.Body;
    const stream = !body
      ? (async function* () {})()
      : body instanceof Readable
        ? body
        : Readable.fromWeb(body.transformToWebStream() as never);
    return this.found(ref, stream, response.ETag, response.VersionId);
  }

  /**
   * Ranged GETs of one write. The size comes from HeadObject, not the manifest: a `path` read of a rewritten
   * key reads what is there now, and a Parquet footer is found from the end. Every range names the write
   * the head saw (its version, else `If-Match` on its ETag), so an overwrite between two ranges fails the
   * version (retried) instead of mixing two files.
   */
  async openRandom(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<RandomAccessObject>> {
    const { client } = this;
    let byteLength: number;
    let read: { eTag?: string; versionId?: string };
    try {
      const head = await client.send(new HeadObjectCommand(named(ref, identity)));
      byteLength = head.ContentLength ?? 0;
      read = { eTag: head.ETag, versionId: head.VersionId };
    } catch (error) {
      const fallback = await this.whenAbsent(ref, identity, error);
      if (fallback === 'current')
        return this.asRewrite(await this.openRandom({ ...ref, versionId: null }, identity));
      return fallback;
    }
    const pinned = this.pin(ref, read.eTag, read.versionId);
    const range = named(pinned, 'write');
    return this.found(
      ref,
      {
        byteLength,
        async slice(start: number, end = byteLength): Promise<ArrayBuffer> {
          if (end <= start) return new ArrayBuffer(0);
          try {
            const response = await client.send(
              new GetObjectCommand({ ...range, Range: `bytes=${start}-${end - 1}` }),
            );
            const bytes = (await response.Body?.transformToByteArray()) ?? new Uint8Array();
            return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
          } catch (error) {
            throw classifyAwsError('read landing file range', error);
          }
        },
      },
      read.eTag,
      read.versionId,
    );
  }

  /**
   * A read that found nothing: a reason, or `current` when a `path` read of a version that is gone falls
   * back to the key's current object (the same file under path identity). HeadObject's 404 has no code, so
   * a GET of one byte says whether the key, the version or the bucket is missing.
   */
  private async whenAbsent(
    ref: ObjectRef,
    identity: ReadIdentity,
    error: unknown,
  ): Promise<Missing | 'current'> {
    let absence = absenceOf(error);
    if (absence === 'unknown-404') {
      try {
        await this.client.send(new GetObjectCommand({ ...named(ref, identity), Range: 'bytes=0-0' }));
      } catch (again) {
        absence = absenceOf(again);
        error = again;
      }
    }
    switch (absence) {
      case 'no-such-key':
        return missing('deleted', error);
      case 'no-such-version':
        return identity === 'path' ? 'current' : missing('version-gone', error);
      case 'precondition-failed':
        return missing('overwritten', error);
      default:
        // NoSuchBucket and everything else: an error, retried and logged, never a silently empty file.
        throw classifyAwsError('read landing file', error);
    }
  }

  private pin(ref: ObjectRef, eTag: string | undefined, versionId: string | undefined): ObjectRef {
    return {
      ...ref,
      versionId: versionOf({ versionId: versionId ?? null }) ?? versionOf(ref),
      eTag: eTag ?? ref.eTag,
    };
  }

  private found<T>(
    ref: ObjectRef,
    body: T,
    eTag: string | undefined,
    versionId: string | undefined,
  ): SourceRead<T> {
    const pinned = this.pin(ref, eTag, versionId);
    // By version: exactly the manifest's write. Without: the same write only if the ETag is the same.
    const asNamed = versionOf(ref) !== null || sameETag(pinned.eTag, ref.eTag);
    return { kind: 'found', body, pinned, asNamed };
  }

  private asRewrite<T>(read: SourceRead<T>): SourceRead<T> {
    return read.kind === 'found' ? { ...read, asNamed: false } : read;
  }
}

import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import type { ObjectRef } from '../model.ts';
import type { RandomAccessObject, SourceObjects } from './ports.ts';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const isMissing = (error: unknown) => (error as Error).name === 'NoSuchKey' || status(error) === 404;

/** Landing objects, streamed from GetObject (the exact version when the manifest names one). */
export class S3SourceObjects implements SourceObjects {
  constructor(private readonly client: S3Client) {}

  async open(ref: ObjectRef): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key, VersionId: ref.versionId ?? undefined }),
      );
      const body = response.Body;
      if (!body) return (async function* () {})();
      return body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as never);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError('read landing file', error);
    }
  }

  /**
   * Ranged GETs of one object version. The size comes from HeadObject, not the manifest: without a
   * versionId the key may have been overwritten since its event, and a Parquet footer is found from the end.
   */
  async openRandom(ref: ObjectRef): Promise<RandomAccessObject | undefined> {
    const { client } = this;
    const VersionId = ref.versionId ?? undefined;
    let byteLength: number;
    let IfMatch: string | undefined;
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: ref.bucket, Key: ref.key, VersionId }));
      byteLength = head.ContentLength ?? 0;
      // Every range from the same object: an overwrite between two ranges fails (412) instead of mixing files.
      IfMatch = head.ETag;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError('read landing file', error);
    }
    return {
      byteLength,
      async slice(start: number, end = byteLength): Promise<ArrayBuffer> {
        if (end <= start) return new ArrayBuffer(0);
        try {
          const response = await client.send(
            new GetObjectCommand({
              Bucket: ref.bucket,
              Key: ref.key,
              VersionId,
              IfMatch,
              Range: `bytes=${start}-${end - 1}`,
            }),
          );
          const bytes = (await response.Body?.transformToByteArray()) ?? new Uint8Array();
          return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
        } catch (error) {
          throw classifyAwsError('read landing file range', error);
        }
      },
    };
  }
}

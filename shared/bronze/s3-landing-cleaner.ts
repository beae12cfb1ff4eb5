import { CopyObjectCommand, DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import type { ObjectRef } from '../model.ts';
import type { LandingCleaner } from './ports.ts';

/** CopyObject copies up to 5 GB in one request; bigger objects need a multipart copy (not done here). */
export const MAX_SINGLE_COPY_BYTES = 5 * 1024 ** 3;

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NoSuchVersion' || e.$metadata?.httpStatusCode === 404;
};

/** S3 URL-encodes nothing for us in `CopySource`: each key segment is percent-encoded, `/` kept. */
const copySource = (ref: ObjectRef) =>
  `${ref.bucket}/${ref.key.split('/').map(encodeURIComponent).join('/')}${
    ref.versionId ? `?versionId=${encodeURIComponent(ref.versionId)}` : ''
  }`;

export class S3LandingCleaner implements LandingCleaner {
  constructor(private readonly client: S3Client) {}

  async remove(ref: ObjectRef): Promise<void> {
    try {
      // DeleteObject of an absent key succeeds (204), so a repeat after a crash is harmless.
      await this.client.send(
        new DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key, VersionId: ref.versionId ?? undefined }),
      );
    } catch (error) {
      if (isMissing(error)) return;
      throw classifyAwsError('clean landing file', error);
    }
  }

  async move(
    ref: ObjectRef,
    to: { readonly bucket: string; readonly prefix: string },
  ): Promise<'moved' | 'gone' | 'tooLarge'> {
    if (ref.size > MAX_SINGLE_COPY_BYTES) return 'tooLarge';
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: to.bucket,
          Key: to.prefix === '' ? ref.key : `${to.prefix}/${ref.key}`,
          CopySource: copySource(ref),
        }),
      );
    } catch (error) {
      // Gone already: a crash after the delete of an earlier attempt (or someone else removed it).
      if (isMissing(error)) return 'gone';
      throw classifyAwsError('archive landing file', error);
    }
    await this.remove(ref);
    return 'moved';
  }
}

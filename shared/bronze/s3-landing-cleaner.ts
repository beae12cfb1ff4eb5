import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import type { ObjectRef } from '../model.ts';
import { MIN_PART_BYTES } from './copy-plan.ts';
import type { LandingCleaner } from './ports.ts';
import { type MultipartCopyOptions, multipartCopy, tagSetHeader } from './s3-multipart-copy.ts';

/** CopyObject copies up to 5 GB in one request; bigger objects take a multipart copy. */
export const MAX_SINGLE_COPY_BYTES = 5 * 1024 ** 3;

export interface LandingCleanerOptions extends MultipartCopyOptions {
  /**
   * Objects above this size are moved by a multipart copy. Only tests lower it (so the emulator copies a
   * small object in parts); at least 5 MiB, since S3 copies a range only of an object over 5 MB.
   * @default MAX_SINGLE_COPY_BYTES
   */
  readonly singleCopyMaxBytes?: number;
}

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NoSuchVersion' || e.$metadata?.httpStatusCode === 404;
};

/**
 * CopyObject of a source over 5 GB: 400 `InvalidRequest`, "The specified copy source is larger than the maximum
 * allowable size for a copy source: 5368709120" (as captured from S3 in rclone/rclone#2375 and
 * hashicorp/terraform-provider-aws#38102). `InvalidRequest` alone covers other mistakes, hence the message.
 */
const isCopySourceTooLarge = (error: unknown) => {
  const e = error as { name?: string; message?: string };
  return e.name === 'InvalidRequest' && /copy source is larger than the maximum/i.test(e.message ?? '');
};

/** S3 URL-encodes nothing for us in `CopySource`: each key segment is percent-encoded, `/` kept. */
const copySource = (ref: ObjectRef) =>
  `${ref.bucket}/${ref.key.split('/').map(encodeURIComponent).join('/')}${
    ref.versionId ? `?versionId=${encodeURIComponent(ref.versionId)}` : ''
  }`;

export class S3LandingCleaner implements LandingCleaner {
  private readonly singleCopyMaxBytes: number;

  constructor(
    private readonly client: S3Client,
    private readonly options: LandingCleanerOptions = {},
  ) {
    this.singleCopyMaxBytes = options.singleCopyMaxBytes ?? MAX_SINGLE_COPY_BYTES;
    if (this.singleCopyMaxBytes < MIN_PART_BYTES || this.singleCopyMaxBytes > MAX_SINGLE_COPY_BYTES)
      throw new RangeError(`singleCopyMaxBytes must be ${MIN_PART_BYTES} to ${MAX_SINGLE_COPY_BYTES}`);
  }

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
  ): Promise<'moved' | 'gone'> {
    const dest = { bucket: to.bucket, key: to.prefix === '' ? ref.key : `${to.prefix}/${ref.key}` };
    try {
      const copied =
        ref.size > this.singleCopyMaxBytes
          ? await this.copyInParts(ref, dest)
          : await this.copyWhole(ref, dest);
      if (copied === 'gone') return 'gone';
    } catch (error) {
      // Gone already: a crash after the delete of an earlier attempt (or someone else removed it).
      if (isMissing(error)) return 'gone';
      throw classifyAwsError('archive landing file', error);
    }
    // Only once the copy is complete at the destination: a crash before this line copies again.
    await this.remove(ref);
    return 'moved';
  }

  private async copyWhole(ref: ObjectRef, to: { bucket: string; key: string }): Promise<'copied' | 'gone'> {
    try {
      await this.client.send(
        new CopyObjectCommand({ Bucket: to.bucket, Key: to.key, CopySource: copySource(ref) }),
      );
      return 'copied';
    } catch (error) {
      // Rewritten over 5 GB since its event: S3 refuses the one-request copy, so copy what is there in parts.
      if (!isCopySourceTooLarge(error)) throw error;
      return this.copyInParts(ref, to);
    }
  }

  private async copyInParts(ref: ObjectRef, to: { bucket: string; key: string }): Promise<'copied' | 'gone'> {
    // The size and ETag of what is there now: the ranges must fit it, and every part must come from it.
    const head = await this.head(ref);
    if (!head) return 'gone';
    const source = copySource(ref);
    if ((head.ContentLength ?? 0) <= this.singleCopyMaxBytes) {
      // Rewritten smaller since its event: one request, still only from the bytes the head saw.
      await this.client.send(
        new CopyObjectCommand({
          Bucket: to.bucket,
          Key: to.key,
          CopySource: source,
          CopySourceIfMatch: ref.versionId ? undefined : head.ETag,
        }),
      );
      return 'copied';
    }
    try {
      // The tags a CopyObject would have copied, of the same version the parts come from. Read after the
      // head: a rewrite after it fails every part (CopySourceIfMatch), so the tags cannot outlive the bytes.
      const { TagSet } = await this.client.send(
        new GetObjectTaggingCommand({
          Bucket: ref.bucket,
          Key: ref.key,
          VersionId: ref.versionId ?? undefined,
        }),
      );
      await multipartCopy(
        this.client,
        { copySource: source, versionId: ref.versionId, head, tagging: tagSetHeader(TagSet) },
        to,
        this.options,
      );
      return 'copied';
    } catch (error) {
      // A 404 mid-copy is the source moved by another run, or the upload itself gone (NoSuchUpload, also
      // 404): only the first is done, so look again rather than guess from the error.
      if (isMissing(error) && !(await this.head(ref))) return 'gone';
      throw classifyAwsError('archive landing file', error);
    }
  }

  private async head(ref: ObjectRef): Promise<HeadObjectCommandOutput | undefined> {
    try {
      return await this.client.send(
        new HeadObjectCommand({ Bucket: ref.bucket, Key: ref.key, VersionId: ref.versionId ?? undefined }),
      );
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }
}

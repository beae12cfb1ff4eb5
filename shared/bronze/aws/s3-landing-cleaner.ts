import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ObjectRef } from '../../ingestion/model.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import { archiveKey } from '../archive-key.ts';
import { MIN_PART_BYTES } from '../copy-plan.ts';
import { absenceOf, quotedETag, versionOf } from '../landing-write.ts';
import type { ArchiveTarget, CleanOutcome, LandingCleaner } from '../ports.ts';
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
const copySource = (ref: ObjectRef) => {
  const version = versionOf(ref);
  return `${ref.bucket}/${ref.key.split('/').map(encodeURIComponent).join('/')}${
    version ? `?versionId=${encodeURIComponent(version)}` : ''
  }`;
};

const REMOVED: CleanOutcome = { kind: 'removed' };
const GONE: CleanOutcome = { kind: 'gone' };
const left = (reason: string): CleanOutcome => ({ kind: 'left', reason });
const REWRITTEN = 'the key holds another write than the one the table read (412 on If-Match)';

/**
 * cleanSource on S3, every call naming the write the manifest names (docs/bronze.md, "cleanSource"): its
 * version id when it has one (that version, and only it, is deleted or copied), else `If-Match` /
 * `x-amz-copy-source-if-match` on its ETag, so a rewrite of the key since the sink read it is left in
 * place (412) instead of destroyed. A missing bucket, landing or archive, is an error, never "gone".
 */
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

  /**
   * DeleteObject of that version (it alone, for good), or of the key if its ETag still is the manifest's:
   * S3 conditional deletes, which need s3:GetObject besides s3:DeleteObject and answer 412 when the ETag
   * differs, 404 when the key is absent
   * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html).
   */
  async remove(ref: ObjectRef): Promise<CleanOutcome> {
    const VersionId = versionOf(ref) ?? undefined;
    const IfMatch = VersionId ? undefined : quotedETag(ref.eTag);
    if (!VersionId && !IfMatch) return left('the manifest names neither a version nor an ETag');
    try {
      await this.client.send(
        new DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key, VersionId, IfMatch }),
      );
      return REMOVED;
    } catch (error) {
      const absence = absenceOf(error);
      if (absence === 'precondition-failed') return left(REWRITTEN);
      if (absence === 'no-such-key' || absence === 'no-such-version') return GONE;
      throw classifyAwsError('clean landing file', error);
    }
  }

  async move(ref: ObjectRef, to: ArchiveTarget): Promise<CleanOutcome> {
    const dest = { bucket: to.bucket, key: archiveKey(ref, to) };
    if (!versionOf(ref) && !quotedETag(ref.eTag))
      return left('the manifest names neither a version nor an ETag');
    let copied: CleanOutcome | 'copied';
    try {
      copied =
        ref.size > this.singleCopyMaxBytes
          ? await this.copyInParts(ref, dest)
          : await this.copyWhole(ref, dest);
    } catch (error) {
      const absence = absenceOf(error);
      if (absence === 'precondition-failed') return left(REWRITTEN);
      // Gone already: a crash after the delete of an earlier attempt (or someone else removed it).
      if (absence === 'no-such-key' || absence === 'no-such-version') return GONE;
      throw classifyAwsError('archive landing file', error);
    }
    if (copied !== 'copied') return copied;
    // Only once the copy is complete at the destination: a crash before this line copies again. A rewrite
    // between the copy and here is left (412): the archive has the write the table read, the key the new one.
    const removed = await this.remove(ref);
    return removed.kind === 'gone' ? REMOVED : removed;
  }

  /** The write the manifest names, whole: by version in `CopySource`, else `CopySourceIfMatch` on its ETag. */
  private async copyWhole(
    ref: ObjectRef,
    to: { bucket: string; key: string },
  ): Promise<CleanOutcome | 'copied'> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: to.bucket,
          Key: to.key,
          CopySource: copySource(ref),
          CopySourceIfMatch: versionOf(ref) ? undefined : quotedETag(ref.eTag),
        }),
      );
      return 'copied';
    } catch (error) {
      // Rewritten over 5 GB since its event: S3 refuses the one-request copy; in parts, still only that write.
      if (!isCopySourceTooLarge(error)) throw error;
      return this.copyInParts(ref, to);
    }
  }

  private async copyInParts(
    ref: ObjectRef,
    to: { bucket: string; key: string },
  ): Promise<CleanOutcome | 'copied'> {
    // The size and headers of the write the manifest names (HeadObject conditional on it as the copy is).
    const head = await this.head(ref);
    if (head === 'gone') return GONE;
    if (head === 'rewritten') return left(REWRITTEN);
    const source = copySource(ref);
    const ifMatch = versionOf(ref) ? undefined : quotedETag(ref.eTag);
    if ((head.ContentLength ?? 0) <= this.singleCopyMaxBytes) {
      // Smaller than the manifest said (or the threshold): one request, still only from that write.
      await this.client.send(
        new CopyObjectCommand({
          Bucket: to.bucket,
          Key: to.key,
          CopySource: source,
          CopySourceIfMatch: ifMatch,
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
          VersionId: versionOf(ref) ?? undefined,
        }),
      );
      await multipartCopy(
        this.client,
        { copySource: source, versionId: versionOf(ref), head, tagging: tagSetHeader(TagSet) },
        to,
        this.options,
      );
      return 'copied';
    } catch (error) {
      // A 404 mid-copy is the source moved by another run, or the upload itself gone (NoSuchUpload, also
      // 404): only the first is done, so look again rather than guess from the error.
      const absence = absenceOf(error);
      if (
        (absence === 'no-such-key' || absence === 'no-such-version' || absence === 'unknown-404') &&
        (await this.head(ref)) === 'gone'
      )
        return GONE;
      throw error;
    }
  }

  /**
   * HeadObject of the named write: `gone` when it is not there, `rewritten` when the key holds another. A
   * HEAD's 404 has no code, so a one-byte GET tells a missing key from a missing bucket (an error).
   */
  private async head(ref: ObjectRef): Promise<HeadObjectCommandOutput | 'gone' | 'rewritten'> {
    const named = {
      Bucket: ref.bucket,
      Key: ref.key,
      VersionId: versionOf(ref) ?? undefined,
      IfMatch: versionOf(ref) ? undefined : quotedETag(ref.eTag),
    };
    try {
      return await this.client.send(new HeadObjectCommand(named));
    } catch (error) {
      let absence = absenceOf(error);
      let cause = error;
      if (absence === 'unknown-404') {
        try {
          await this.client.send(new GetObjectCommand({ ...named, Range: 'bytes=0-0' }));
        } catch (again) {
          absence = absenceOf(again);
          cause = again;
        }
      }
      if (absence === 'no-such-key' || absence === 'no-such-version') return 'gone';
      if (absence === 'precondition-failed') return 'rewritten';
      throw cause;
    }
  }
}

import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type HeadObjectCommandOutput,
  type S3Client,
  type Tag,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { type CopyPart, planCopyParts } from '../copy-plan.ts';

export interface MultipartCopySource {
  /** `bucket/key[?versionId=]`, URL-encoded as `CopySource` wants it. */
  readonly copySource: string;
  /** Set when the source is pinned by its version: a version never changes, so no ETag check is needed. */
  readonly versionId: string | null;
  /** The source's `HeadObject`: its size, ETag and the headers a copy should carry over. */
  readonly head: HeadObjectCommandOutput;
  /** The source's tags as the `x-amz-tagging` header wants them (`tagSetHeader`); absent when it has none. */
  readonly tagging?: string;
}

export interface MultipartCopyOptions {
  readonly partBytes?: number;
  /** Parts copied at once. */
  readonly concurrency?: number;
}

/**
 * Server-side copy of an object of any size: CreateMultipartUpload, UploadPartCopy of each range,
 * CompleteMultipartUpload. Nothing is visible at the destination until the complete, so a failure leaves
 * no partial object. On a failure it waits for the parts in flight and then aborts the upload (parts still
 * in flight while an abort runs might survive it, per AbortMultipartUpload's docs); a crash leaves the
 * upload to the bucket's lifecycle rule.
 */
export async function multipartCopy(
  client: S3Client,
  source: MultipartCopySource,
  to: { readonly bucket: string; readonly key: string },
  options: MultipartCopyOptions = {},
): Promise<void> {
  const { head } = source;
  const plan = planCopyParts(head.ContentLength ?? 0, options.partBytes);
  // UploadPartCopy, unlike CopyObject, carries no metadata or tags over: the complete object gets what
  // the upload was created with, so the archive keeps the source's content headers and tags as a
  // CopyObject would (its MetadataDirective and TaggingDirective default to COPY).
  const { UploadId } = await client.send(
    new CreateMultipartUploadCommand({
      Bucket: to.bucket,
      Key: to.key,
      ContentType: head.ContentType,
      ContentEncoding: head.ContentEncoding,
      ContentDisposition: head.ContentDisposition,
      ContentLanguage: head.ContentLanguage,
      CacheControl: head.CacheControl,
      Expires: head.Expires,
      Metadata: head.Metadata,
      Tagging: source.tagging,
    }),
  );
  if (!UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
  const upload = { Bucket: to.bucket, Key: to.key, UploadId };
  try {
    const parts = await copyParts(plan, options.concurrency ?? 8, async (part) => {
      const { CopyPartResult } = await client.send(
        new UploadPartCopyCommand({
          ...upload,
          PartNumber: part.partNumber,
          CopySource: source.copySource,
          CopySourceRange: `bytes=${part.first}-${part.last}`,
          // Every part from the same bytes: a source rewritten mid-copy fails the part (412) instead of
          // completing an object stitched from two versions.
          CopySourceIfMatch: source.versionId ? undefined : head.ETag,
        }),
      );
      return { PartNumber: part.partNumber, ETag: CopyPartResult?.ETag };
    });
    await client.send(new CompleteMultipartUploadCommand({ ...upload, MultipartUpload: { Parts: parts } }));
  } catch (error) {
    // Best effort: the lifecycle rule (or a later abort) frees what this one cannot.
    await client.send(new AbortMultipartUploadCommand(upload)).catch(() => undefined);
    throw error;
  }
}

/**
 * Runs `copy` on every part, at most `concurrency` at once; after a failure no new part starts, and it
 * throws the first error only once every part in flight has settled (so an abort then frees them all).
 */
async function copyParts(
  plan: readonly CopyPart[],
  concurrency: number,
  copy: (part: CopyPart) => Promise<CompletedPart>,
): Promise<CompletedPart[]> {
  const done: CompletedPart[] = new Array(plan.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < plan.length) {
      const index = next++;
      const part = plan[index];
      if (!part) break;
      try {
        done[index] = await copy(part);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, plan.length)) }, worker));
  if (failure) throw failure.error;
  return done;
}

/**
 * A tag set as the `x-amz-tagging` header: URL query parameters, each key and value percent-encoded (S3
 * decodes it as a query string, so a literal `+` must be `%2B` or it would read as a space).
 * @example tagSetHeader([{ Key: 'team', Value: 'a b+c' }]) // 'team=a%20b%2Bc'
 */
export function tagSetHeader(tags: readonly Tag[] | undefined): string | undefined {
  if (!tags || tags.length === 0) return undefined;
  return tags
    .map(({ Key, Value }) => `${encodeURIComponent(Key ?? '')}=${encodeURIComponent(Value ?? '')}`)
    .join('&');
}

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { MAX_SINGLE_COPY_BYTES } from '../../../../shared/bronze/aws/s3-landing-cleaner.ts';
import { MAX_PART_BYTES, MAX_PARTS, MIN_PART_BYTES } from '../../../../shared/bronze/copy-plan.ts';

/**
 * An object's bytes stand for themselves by name: `content` says which bytes, so a 6 GB object costs
 * nothing, and an object put together from parts of two different contents is `stitched`.
 */
export interface FakeObject {
  readonly size: number;
  readonly content: string;
  readonly etag: string;
  readonly versionId?: string;
  readonly contentType?: string;
  readonly metadata?: Record<string, string>;
  /** Object tags: a CopyObject copies them (TaggingDirective COPY), a multipart upload gets only its `Tagging`. */
  readonly tags?: Record<string, string>;
}

interface Part {
  readonly content: string;
  readonly etag: string;
  readonly first: number;
  readonly last: number;
}

const s3Error = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

/**
 * The S3 calls of a move, in memory, enforcing what AWS documents and moto does not (CopySourceIfMatch,
 * the range and part-count limits, CopyObject's 5 GB).
 */
export class MultipartS3Fake {
  readonly objects = new Map<string, FakeObject>();
  readonly uploads = new Map<
    string,
    { bucket: string; key: string; parts: Map<number, Part>; meta: unknown }
  >();
  readonly calls: string[] = [];
  readonly partCopies: { CopySource?: string; CopySourceIfMatch?: string; CopySourceRange?: string }[] = [];
  readonly tagReads: { Key?: string; VersionId?: string }[] = [];
  aborted = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** Called before each request; throw to fail it. */
  before?: (call: string, input: Record<string, unknown>) => void;
  /** Called once a part copy is done (e.g. to rewrite the source mid-copy). */
  afterPart?: (partNumber: number) => void;
  /** The buckets that exist; a request naming another answers 404 NoSuchBucket. Unset: every bucket. */
  buckets?: Set<string>;
  private nextId = 0;

  put(bucket: string, key: string, object: FakeObject) {
    this.objects.set(`${bucket}/${key}`, object);
  }

  get(bucket: string, key: string) {
    return this.objects.get(`${bucket}/${key}`);
  }

  private bucket(name: unknown) {
    if (this.buckets && !this.buckets.has(String(name))) throw s3Error('NoSuchBucket', 404);
  }

  /** `bucket/key[?versionId=]`, each key segment percent-encoded. */
  private source(copySource: string, ifMatch: string | undefined) {
    const [path = '', query] = copySource.split('?');
    const versionId = query ? new URLSearchParams(query).get('versionId') : undefined;
    this.bucket(decodeURIComponent(path).split('/')[0]);
    const object = this.objects.get(decodeURIComponent(path));
    if (!object) throw s3Error('NoSuchKey', 404);
    if (versionId && object.versionId !== versionId) throw s3Error('NoSuchVersion', 404);
    if (ifMatch !== undefined && ifMatch !== object.etag) throw s3Error('PreconditionFailed', 412);
    return object;
  }

  readonly client = {
    send: async (command: { input: Record<string, unknown> }) => {
      const call = command.constructor.name.replace(/Command$/, '');
      this.calls.push(call);
      this.before?.(call, command.input);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        // One turn of the event loop: parts sent together overlap, as they would on the network.
        await new Promise((resolve) => setImmediate(resolve));
        return this.handle(command);
      } finally {
        this.inFlight--;
      }
    },
  } as unknown as S3Client;

  private handle(command: { input: Record<string, unknown> }): unknown {
    if (command instanceof HeadObjectCommand || command instanceof GetObjectCommand) {
      const { Bucket, Key, VersionId, IfMatch } = command.input;
      // A HEAD's error has no body: S3 (and the SDK) give it no code but its status.
      const head = command instanceof HeadObjectCommand;
      try {
        this.bucket(Bucket);
        const object = this.get(String(Bucket), String(Key));
        if (!object) throw s3Error('NoSuchKey', 404);
        if (VersionId && object.versionId !== VersionId) throw s3Error('NoSuchVersion', 404);
        if (IfMatch !== undefined && IfMatch !== object.etag) throw s3Error('PreconditionFailed', 412);
      } catch (error) {
        const status = (error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode;
        throw head ? s3Error(status === 404 ? 'NotFound' : 'PreconditionFailed', status) : error;
      }
      const object = this.get(String(Bucket), String(Key)) as FakeObject;
      return {
        ContentLength: object.size,
        ETag: object.etag,
        ContentType: object.contentType,
        Metadata: object.metadata,
      };
    }
    if (command instanceof GetObjectTaggingCommand) {
      const { Bucket, Key, VersionId } = command.input;
      this.tagReads.push({ Key, VersionId });
      const object = this.get(String(Bucket), String(Key));
      if (!object) throw s3Error('NoSuchKey', 404);
      if (VersionId && object.versionId !== VersionId) throw s3Error('NoSuchVersion', 404);
      return { TagSet: Object.entries(object.tags ?? {}).map(([Key, Value]) => ({ Key, Value })) };
    }
    if (command instanceof CopyObjectCommand) {
      const { Bucket, Key, CopySource, CopySourceIfMatch } = command.input;
      const object = this.source(String(CopySource), CopySourceIfMatch);
      this.bucket(Bucket);
      // https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html: one request copies up to 5 GB.
      if (object.size > MAX_SINGLE_COPY_BYTES)
        throw Object.assign(s3Error('InvalidRequest', 400), {
          message: `The specified copy source is larger than the maximum allowable size for a copy source: ${MAX_SINGLE_COPY_BYTES}`,
        });
      this.put(String(Bucket), String(Key), { ...object, etag: `"copy-${this.nextId++}"` });
      return {};
    }
    if (command instanceof CreateMultipartUploadCommand) {
      const { Bucket, Key, ContentType, Metadata, Tagging } = command.input;
      this.bucket(Bucket);
      const id = `upload-${this.nextId++}`;
      // `Tagging` is the x-amz-tagging header, URL query parameters, decoded as S3 (and moto's parse_qs) do.
      const tags =
        Tagging === undefined ? undefined : Object.fromEntries(new URLSearchParams(String(Tagging)));
      this.uploads.set(id, {
        bucket: String(Bucket),
        key: String(Key),
        parts: new Map(),
        meta: { contentType: ContentType, metadata: Metadata, tags },
      });
      return { UploadId: id };
    }
    if (command instanceof UploadPartCopyCommand) {
      const { UploadId, PartNumber, CopySource, CopySourceIfMatch, CopySourceRange } = command.input;
      this.partCopies.push({ CopySource, CopySourceIfMatch, CopySourceRange });
      const upload = this.uploads.get(String(UploadId));
      if (!upload) throw s3Error('NoSuchUpload', 404);
      const object = this.source(String(CopySource), CopySourceIfMatch);
      const range = /^bytes=(\d+)-(\d+)$/.exec(String(CopySourceRange));
      const first = Number(range?.[1]);
      const last = Number(range?.[2]);
      // A range only of an object over 5 MB; within the object; a part of at most 5 GiB, numbered 1-10,000.
      if (!range || object.size <= MIN_PART_BYTES || last >= object.size || first > last)
        throw s3Error('InvalidRange', 416);
      if (last - first + 1 > MAX_PART_BYTES) throw s3Error('EntityTooLarge', 400);
      const partNumber = Number(PartNumber);
      if (!(partNumber >= 1 && partNumber <= MAX_PARTS)) throw s3Error('InvalidArgument', 400);
      const etag = `"part-${this.nextId++}"`;
      upload.parts.set(partNumber, { content: object.content, etag, first, last });
      this.afterPart?.(partNumber);
      return { CopyPartResult: { ETag: etag } };
    }
    if (command instanceof CompleteMultipartUploadCommand) {
      const { UploadId, MultipartUpload } = command.input as {
        UploadId: string;
        MultipartUpload: { Parts: { PartNumber: number; ETag: string }[] };
      };
      const upload = this.uploads.get(UploadId);
      if (!upload) throw s3Error('NoSuchUpload', 404);
      const listed = MultipartUpload.Parts;
      const parts = listed.map((p, i) => {
        const part = upload.parts.get(p.PartNumber);
        if (!part || part.etag !== p.ETag) throw s3Error('InvalidPart', 400);
        if (i > 0 && p.PartNumber <= (listed[i - 1]?.PartNumber ?? 0)) throw s3Error('InvalidPartOrder', 400);
        if (i < listed.length - 1 && part.last - part.first + 1 < MIN_PART_BYTES)
          throw s3Error('EntityTooSmall', 400);
        return part;
      });
      let next = 0;
      const contents = new Set(parts.map((p) => p.content));
      for (const part of parts) next = part.first === next ? part.last + 1 : Number.NaN;
      const whole = contents.size === 1 && !Number.isNaN(next);
      const meta = upload.meta as {
        contentType?: string;
        metadata?: Record<string, string>;
        tags?: Record<string, string>;
      };
      this.put(upload.bucket, upload.key, {
        size: parts.reduce((sum, p) => sum + p.last - p.first + 1, 0),
        content: whole ? ([...contents][0] ?? '') : `stitched(${[...contents].join('+')})`,
        etag: `"mpu-${this.nextId++}-${parts.length}"`,
        contentType: meta.contentType,
        metadata: meta.metadata,
        tags: meta.tags,
      });
      this.uploads.delete(UploadId);
      return {};
    }
    if (command instanceof AbortMultipartUploadCommand) {
      if (this.uploads.delete(String(command.input.UploadId))) this.aborted++;
      return {};
    }
    if (command instanceof DeleteObjectCommand) {
      // S3 conditional deletes: If-Match against the current object, 412 on another ETag, 404 when absent
      // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html).
      const { Bucket, Key, VersionId, IfMatch } = command.input;
      this.bucket(Bucket);
      const object = this.get(String(Bucket), String(Key));
      if (VersionId !== undefined) {
        if (object?.versionId === VersionId) this.objects.delete(`${Bucket}/${Key}`);
        return {};
      }
      if (IfMatch !== undefined) {
        if (!object) throw s3Error('NoSuchKey', 404);
        if (IfMatch !== object.etag) throw s3Error('PreconditionFailed', 412);
      }
      this.objects.delete(`${Bucket}/${Key}`);
      return {};
    }
    throw new Error(`the fake does not know ${command.constructor.name}`);
  }
}

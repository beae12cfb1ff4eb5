import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { classifyAwsError } from '../../kernel/errors.ts';

/**
 * Parts of a streamed upload: S3 takes parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html); 8 MiB parts cover 78 GiB.
 */
const PART_BYTES = 8 * 1024 * 1024;

/**
 * An object written from chunks: buffered up to one part, uploaded in parts once it outgrows one, and a
 * single `PutObject` when it never does. It appears whole at `close` (`CompleteMultipartUpload`) or not at
 * all; `abort` drops the parts (and a crash leaves them to the bucket's abort-incomplete-uploads rule).
 */
export class S3UploadStream {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private uploadId: string | undefined;
  private readonly parts: { ETag: string | undefined; PartNumber: number }[] = [];

  constructor(
    private readonly client: S3Client,
    private readonly object: { readonly Bucket: string; readonly Key: string },
    private readonly operation: string,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
    if (this.buffered >= PART_BYTES) await this.uploadPart();
  }

  async close(): Promise<void> {
    try {
      if (this.uploadId === undefined) {
        await this.client.send(new PutObjectCommand({ ...this.object, Body: this.take() }));
        return;
      }
      if (this.buffered > 0) await this.uploadPart();
      await this.client.send(
        new CompleteMultipartUploadCommand({
          ...this.object,
          UploadId: this.uploadId,
          MultipartUpload: { Parts: this.parts },
        }),
      );
    } catch (error) {
      throw classifyAwsError(this.operation, error);
    }
  }

  async abort(): Promise<void> {
    if (this.uploadId === undefined) return;
    try {
      await this.client.send(new AbortMultipartUploadCommand({ ...this.object, UploadId: this.uploadId }));
    } catch (error) {
      throw classifyAwsError(`${this.operation} (abort)`, error);
    }
  }

  private take(): Uint8Array {
    const body = Buffer.concat(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    return body;
  }

  private async uploadPart(): Promise<void> {
    try {
      if (this.uploadId === undefined) {
        const created = await this.client.send(new CreateMultipartUploadCommand(this.object));
        this.uploadId = created.UploadId;
      }
      const PartNumber = this.parts.length + 1;
      const part = await this.client.send(
        new UploadPartCommand({ ...this.object, UploadId: this.uploadId, PartNumber, Body: this.take() }),
      );
      this.parts.push({ ETag: part.ETag, PartNumber });
    } catch (error) {
      throw classifyAwsError(this.operation, error);
    }
  }
}

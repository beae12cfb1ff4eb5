import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../../kernel/errors.ts';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const isMissing = (error: unknown) => (error as Error).name === 'NoSuchKey' || status(error) === 404;

/** An object read by ranges: hyparquet's `AsyncBuffer` shape. */
export interface RangedObject {
  readonly byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer>;
}

/**
 * Ranged GETs of one object (a Parquet file is read footer first, then a row group at a time), or undefined
 * when it does not exist. The size comes from `HeadObject`, and every range carries its ETag (`If-Match`):
 * an overwrite between two ranges fails with 412 instead of mixing two objects
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html).
 */
export async function openRanged(
  client: S3Client,
  object: { readonly Bucket: string; readonly Key: string; readonly VersionId?: string },
  operation: string,
): Promise<RangedObject | undefined> {
  let byteLength: number;
  let IfMatch: string | undefined;
  try {
    const head = await client.send(new HeadObjectCommand(object));
    byteLength = head.ContentLength ?? 0;
    IfMatch = head.ETag;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw classifyAwsError(operation, error);
  }
  return {
    byteLength,
    async slice(start: number, end = byteLength): Promise<ArrayBuffer> {
      if (end <= start) return new ArrayBuffer(0);
      try {
        const response = await client.send(
          new GetObjectCommand({ ...object, IfMatch, Range: `bytes=${start}-${end - 1}` }),
        );
        const bytes = (await response.Body?.transformToByteArray()) ?? new Uint8Array();
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      } catch (error) {
        throw classifyAwsError(`${operation} (range)`, error);
      }
    },
  };
}

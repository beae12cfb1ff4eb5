import { PutObjectCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import type { PutIfAbsentResult } from '../put-if-absent.ts';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/**
 * `PutObject` with `If-None-Match: *`, the one place S3's answers to a conditional create are mapped
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html): 412 Precondition Failed
 * means the key exists (`exists`); 409 ConditionalRequestConflict means another conditional write to the key
 * was in flight and AWS asks for a retry (`conflict`): it says nothing about whether the key exists yet.
 * Anything else is classified as every other S3 call is (`classifyAwsError`).
 */
export async function putIfAbsent(
  client: S3Client,
  input: Omit<PutObjectCommandInput, 'IfNoneMatch'>,
  operation: string,
): Promise<PutIfAbsentResult> {
  try {
    await client.send(new PutObjectCommand({ ...input, IfNoneMatch: '*' }));
    return 'created';
  } catch (error) {
    if (status(error) === 412) return 'exists';
    if (status(error) === 409) return 'conflict';
    throw classifyAwsError(operation, error);
  }
}

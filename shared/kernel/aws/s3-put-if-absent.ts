import { PutObjectCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import { conditionalCreate, type PutIfAbsentResult } from '../put-if-absent.ts';

/**
 * `PutObject` with `If-None-Match: *`: every store that creates an object only once (manifests, Delta log
 * entries) goes through it, so S3's 412 and 409 are read one way (`conditionalCreate`).
 */
export function putIfAbsent(
  client: S3Client,
  input: Omit<PutObjectCommandInput, 'IfNoneMatch'>,
  operation: string,
): Promise<PutIfAbsentResult> {
  return conditionalCreate(
    () => client.send(new PutObjectCommand({ ...input, IfNoneMatch: '*' })),
    (error) => classifyAwsError(operation, error),
  );
}

import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';

/**
 * The versions under a prefix whose objects are named `<version, 20 digits>.json`, ascending: manifests
 * (`<table>/_manifests/`) and Delta commits (`_delta_log/`) share this layout.
 */
export async function listVersions(
  client: S3Client,
  bucket: string,
  prefix: string,
  operation: string,
  /** List only keys after this one (`StartAfter`): a long log is not listed from its first entry. */
  startAfter?: string,
): Promise<number[]> {
  const versions: number[] = [];
  try {
    for await (const page of paginateListObjectsV2(
      { client },
      { Bucket: bucket, Prefix: prefix, StartAfter: startAfter },
    )) {
      for (const object of page.Contents ?? []) {
        const match = /\/(\d{20})\.json$/.exec(object.Key ?? '');
        if (match?.[1]) versions.push(Number(match[1]));
      }
    }
  } catch (error) {
    throw classifyAwsError(operation, error);
  }
  return versions.sort((a, b) => a - b);
}

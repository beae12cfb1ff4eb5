import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { classifyAwsError, InletError } from '../../kernel/errors.ts';
import type { RandomAccessObject } from '../ports.ts';
import type { ListedFile, TableFiles } from '../table-files.ts';
import { openRanged } from './s3-random-access.ts';

/**
 * A Delta table's data files on S3 (optimize reads them, vacuum lists and deletes them). Reads are ranged
 * with `If-Match` on the HEAD's ETag (s3-random-access.ts); the listing is ListObjectsV2 under the root,
 * `_delta_log/` left out; deletes are DeleteObjects of up to 1,000 keys, which reports per-key errors in
 * its answer rather than failing the call
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html): any is an error here.
 */
export class S3TableFiles implements TableFiles {
  private readonly root: string;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    prefix: string,
  ) {
    this.root = prefix === '' ? '' : `${prefix}/`;
  }

  async open(path: string): Promise<RandomAccessObject> {
    const file = await openRanged(
      this.client,
      { Bucket: this.bucket, Key: `${this.root}${path}` },
      'read bronze data file',
    );
    if (!file)
      throw new InletError(`bronze data file s3://${this.bucket}/${this.root}${path} is missing`, {
        retryable: false,
      });
    return file;
  }

  async *list(): AsyncIterable<ListedFile> {
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.root, ContinuationToken: token }),
        );
      } catch (error) {
        throw classifyAwsError('list bronze data files', error);
      }
      for (const object of page.Contents ?? []) {
        const path = (object.Key ?? '').slice(this.root.length);
        if (path === '' || path.startsWith('_delta_log/')) continue;
        yield { path, size: object.Size ?? 0, lastModified: object.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
    } while (token);
  }

  async delete(paths: readonly string[]): Promise<void> {
    for (let i = 0; i < paths.length; i += 1000) {
      const keys = paths.slice(i, i + 1000).map((p) => ({ Key: `${this.root}${p}` }));
      let errors: { Key?: string; Code?: string }[] | undefined;
      try {
        const answer = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        errors = answer.Errors;
      } catch (error) {
        throw classifyAwsError('delete bronze data files', error);
      }
      if (errors && errors.length > 0)
        throw new InletError(
          `could not delete ${errors.length} bronze data file(s), e.g. ${errors[0]?.Key}: ${errors[0]?.Code}`,
          { retryable: true },
        );
    }
  }
}

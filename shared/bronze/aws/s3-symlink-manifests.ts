import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../../kernel/errors.ts';
import { conditionalReplace } from '../../kernel/put-if-absent.ts';
import type { SymlinkManifests } from '../ports.ts';
import { SYMLINK_MANIFEST_DIR } from '../symlink-manifest.ts';

/** User metadata (`x-amz-meta-delta-version`) naming the Delta version a manifest lists. */
const VERSION_METADATA = 'delta-version';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

/**
 * The symlink manifests of the table at `s3://bucket/prefix`. A replacement is conditional on the ETag read
 * (`If-Match`), a first write on the key being absent (`If-None-Match: *`): S3 answers 412 when the object
 * changed (or, for `If-Match`, 404 when it is gone) and 409 when another conditional write to the key was in
 * flight (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html); each is a
 * `conflict` the projection reads again.
 */
export class S3SymlinkManifests implements SymlinkManifests {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  private key(dir: string): string {
    const relative = `${SYMLINK_MANIFEST_DIR}/${dir}manifest`;
    return this.prefix === '' ? relative : `${this.prefix}/${relative}`;
  }

  async read(dir: string): Promise<{ version: number; etag: string } | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(dir) }));
      const version = Number(head.Metadata?.[VERSION_METADATA]);
      // A manifest without our version (written by Spark's GENERATE, say) is older than any projection.
      return head.ETag ? { version: Number.isInteger(version) ? version : -1, etag: head.ETag } : undefined;
    } catch (error) {
      if (status(error) === 404 || (error as Error).name === 'NotFound') return undefined;
      throw classifyAwsError('read bronze symlink manifest', error);
    }
  }

  write(
    dir: string,
    body: string,
    version: number,
    etag: string | undefined,
  ): Promise<'written' | 'conflict'> {
    return conditionalReplace(
      () =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.key(dir),
            Body: body,
            ContentType: 'text/plain',
            Metadata: { [VERSION_METADATA]: String(version) },
            ...(etag === undefined ? { IfNoneMatch: '*' } : { IfMatch: etag }),
          }),
        ),
      etag,
      (error) => classifyAwsError('write bronze symlink manifest', error),
    );
  }
}

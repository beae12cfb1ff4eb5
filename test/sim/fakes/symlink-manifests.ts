/**
 * A bronze table's symlink manifests in the simulation's bucket, as S3SymlinkManifests maps them
 * (shared/bronze/aws/s3-symlink-manifests.ts): a HeadObject for the version (user metadata) and the ETag, a
 * PutObject with `If-Match` on the ETag read or `If-None-Match: *`. S3 answers 412 when the object is not
 * the one named (for `If-Match`, 404 when it is gone) and 409 while another conditional write to the key is
 * in flight (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html). The ETag is
 * the body's MD5, as S3 gives for a single-part upload without SSE-KMS: two writes of the same lines share
 * it. Every call goes through the SDK fault model on behalf of one worker.
 */
import type { SymlinkManifests } from '../../../shared/bronze/ports.ts';
import { SYMLINK_MANIFEST_DIR } from '../../../shared/bronze/symlink-manifest.ts';
import { classifyAwsError } from '../../../shared/kernel/errors.ts';
import { conditionalReplace } from '../../../shared/kernel/put-if-absent.ts';
import { type Aws, type SdkError, sdkError } from '../faults.ts';
import type { Scheduler, Worker } from '../scheduler.ts';
import { etagOf } from './landing.ts';
import type { Classify } from './ledger.ts';
import type { S3Bucket } from './s3.ts';

/** The adapter's user metadata key (`x-amz-meta-delta-version`). */
export const VERSION_METADATA = 'delta-version';

/** How long a conditional write counts as in flight for another writer of the key (S3Bucket's window). */
const IN_FLIGHT_MS = 20;

export interface SimSymlinkManifestsCtx {
  readonly aws: Aws;
  readonly worker: Worker;
  readonly classify?: Classify;
  readonly bucket: S3Bucket;
  readonly scheduler: Scheduler;
  /** The table's root in the bucket, without a trailing slash. */
  readonly prefix: string;
  /** Where a write that lowers a manifest's recorded version is reported (SL1, read by the checks). */
  readonly regressions: string[];
}

const status = (error: unknown) => (error as SdkError).$metadata?.httpStatusCode;

/** The manifest key of `dir` under a table root (`<root>/_symlink_format_manifest/<dir>manifest`). */
export const symlinkManifestKey = (prefix: string, dir: string) =>
  `${prefix === '' ? '' : `${prefix}/`}${SYMLINK_MANIFEST_DIR}/${dir}manifest`;

/** Conditional writes in flight per bucket and key, and whose: one S3 for every worker's fake. */
const inFlight = new WeakMap<S3Bucket, Map<string, { until: number; by: string }>>();

export class SimSymlinkManifests implements SymlinkManifests {
  constructor(protected readonly ctx: SimSymlinkManifestsCtx) {}

  async read(dir: string): Promise<{ version: number; etag: string } | undefined> {
    const key = symlinkManifestKey(this.ctx.prefix, dir);
    try {
      return await this.ctx.aws.send(this.ctx.worker, 's3', `head ${key}`, () => {
        const body = this.ctx.bucket.get(key);
        const version = Number(this.ctx.bucket.metadata.get(key)?.[VERSION_METADATA]);
        return { version: Number.isInteger(version) ? version : -1, etag: etagOf(body) };
      });
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw (this.ctx.classify ?? classifyAwsError)('read bronze symlink manifest', error);
    }
  }

  write(
    dir: string,
    body: string,
    version: number,
    etag: string | undefined,
  ): Promise<'written' | 'conflict'> {
    const key = symlinkManifestKey(this.ctx.prefix, dir);
    return conditionalReplace(
      () =>
        this.ctx.aws.send(this.ctx.worker, 's3', `putManifest ${key} v${version}`, () => {
          this.precondition(key, etag);
          this.put(key, body, version);
        }),
      etag,
      (error) => (this.ctx.classify ?? classifyAwsError)('write bronze symlink manifest', error),
    );
  }

  /** S3's check of `If-Match` / `If-None-Match: *` at the instant the put applies (a variant may drop it). */
  protected precondition(key: string, etag: string | undefined): void {
    const { bucket, scheduler, worker } = this.ctx;
    const writes = inFlight.get(bucket) ?? new Map<string, { until: number; by: string }>();
    inFlight.set(bucket, writes);
    const other = writes.get(key);
    if (other && other.until > scheduler.now && other.by !== worker.name)
      throw sdkError('ConditionalRequestConflict', 409);
    const current = bucket.objects.get(key);
    if (etag === undefined ? current !== undefined : current === undefined)
      throw sdkError(etag === undefined ? 'PreconditionFailed' : 'NoSuchKey', etag === undefined ? 412 : 404);
    if (current !== undefined && etagOf(current) !== etag) throw sdkError('PreconditionFailed', 412);
    writes.set(key, { until: scheduler.now + IN_FLIGHT_MS, by: worker.name });
  }

  private put(key: string, body: string, version: number): void {
    const { bucket, regressions, worker } = this.ctx;
    const before = Number(bucket.metadata.get(key)?.[VERSION_METADATA] ?? -1);
    if (version < before)
      regressions.push(`SL1: ${worker.name} replaced ${key} at Delta ${before} with Delta ${version}`);
    bucket.put(key, body);
    bucket.metadata.set(key, { [VERSION_METADATA]: String(version) });
  }
}

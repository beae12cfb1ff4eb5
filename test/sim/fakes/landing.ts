/**
 * The landing bucket's writes as S3 names them (an unversioned bucket: an object's ETag is its content's
 * MD5, as for a single-part PUT), and cleanSource's calls on them, written as S3LandingCleaner maps its
 * calls and errors: a delete or copy conditional on the write's ETag (412 when the key holds another write,
 * 404 when it holds none), through the SDK fault model on behalf of one worker.
 */
import { createHash } from 'node:crypto';
import { archiveKey } from '../../../shared/bronze/archive-key.ts';
import { sameETag } from '../../../shared/bronze/landing-write.ts';
import type {
  ArchiveTarget,
  CleanOutcome,
  FileClaims,
  LandingCleaner,
} from '../../../shared/bronze/ports.ts';
import { batchKey, fileKey } from '../../../shared/ingestion/ledger-keys.ts';
import { BATCH_STATE, type ObjectRef } from '../../../shared/ingestion/model.ts';
import { classifyAwsError } from '../../../shared/kernel/errors.ts';
import { type Aws, type SdkError, sdkError } from '../faults.ts';
import type { Worker } from '../scheduler.ts';
import type { DynamoTable } from './dynamo.ts';
import type { Classify } from './ledger.ts';
import type { S3Bucket } from './s3.ts';

export const etagOf = (body: string) => `"${createHash('md5').update(body, 'latin1').digest('hex')}"`;

interface Ctx {
  readonly aws: Aws;
  readonly worker: Worker;
  readonly classify?: Classify;
}

const status = (error: unknown) => (error as SdkError).$metadata?.httpStatusCode;

/** A write removed by cleanSource: which key, which bytes, where it was archived. The checks read these. */
export interface Removal {
  readonly key: string;
  readonly body: string;
  readonly archivedAt?: string;
}

export class SimLandingCleaner implements LandingCleaner {
  constructor(
    protected readonly ctx: Ctx & {
      readonly landing: S3Bucket;
      readonly archive: S3Bucket;
      readonly removals: Removal[];
    },
  ) {}

  /** The current body if it is the named write; 404 / 412 as S3 answers a conditional request. */
  protected named(ref: ObjectRef): string {
    const body = this.ctx.landing.objects.get(ref.key);
    if (body === undefined) throw sdkError('NoSuchKey', 404);
    if (!sameETag(etagOf(body), ref.eTag)) throw sdkError('PreconditionFailed', 412);
    return body;
  }

  private async call(op: string, apply: () => void): Promise<CleanOutcome> {
    try {
      await this.ctx.aws.send(this.ctx.worker, 's3', op, apply);
      return { kind: 'removed' };
    } catch (error) {
      if (status(error) === 412) return { kind: 'left', reason: '412' };
      if (status(error) === 404) return { kind: 'gone' };
      throw (this.ctx.classify ?? classifyAwsError)('clean landing file', error);
    }
  }

  remove(ref: ObjectRef): Promise<CleanOutcome> {
    return this.call(`deleteObject landing/${ref.key} If-Match`, () => {
      const body = this.named(ref);
      this.ctx.landing.delete(ref.key);
      this.ctx.removals.push({ key: ref.key, body });
    });
  }

  async move(ref: ObjectRef, to: ArchiveTarget): Promise<CleanOutcome> {
    const dest = archiveKey(ref, to);
    const copied = await this.call(`copyObject landing/${ref.key} -> ${dest} CopySourceIfMatch`, () => {
      this.ctx.archive.put(dest, this.named(ref));
    });
    if (copied.kind !== 'removed') return copied;
    const removed = await this.call(`deleteObject landing/${ref.key} If-Match`, () => {
      const body = this.named(ref);
      this.ctx.landing.delete(ref.key);
      this.ctx.removals.push({ key: ref.key, body, archivedAt: dest });
    });
    return removed.kind === 'gone' ? { kind: 'removed' } : removed;
  }
}

/** The ledger's FILE and BATCH items, read as DynamoDbFileClaims reads them. */
export class SimFileClaims implements FileClaims {
  constructor(private readonly ctx: Ctx & { readonly db: DynamoTable }) {}

  async committedVersion(table: string, identity: string): Promise<number | undefined> {
    try {
      return await this.ctx.aws.send(this.ctx.worker, 'dynamodb', `getFileClaim ${table}`, () => {
        const batchId = this.ctx.db.get(fileKey(table, identity))?.batchId as string | undefined;
        if (!batchId) return undefined;
        const batch = this.ctx.db.get(batchKey(table, batchId));
        return batch?.state === BATCH_STATE.committed ? (batch.version as number) : undefined;
      });
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)('read file claim', error);
    }
  }
}

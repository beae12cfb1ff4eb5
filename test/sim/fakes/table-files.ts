/**
 * A Delta table's data files in the simulation's bucket, as the S3 adapter maps them
 * (shared/bronze/aws/s3-table-files.ts): ranged reads of a file, a listing with each object's
 * `LastModified`, DeleteObjects; every call through the SDK fault model on behalf of one worker.
 */
import type { RandomAccessObject } from '../../../shared/bronze/ports.ts';
import type { ListedFile, TableFiles } from '../../../shared/bronze/table-files.ts';
import { classifyAwsError } from '../../../shared/kernel/errors.ts';
import type { Aws } from '../faults.ts';
import type { Worker } from '../scheduler.ts';
import { fromBody } from './bronze.ts';
import type { Classify } from './ledger.ts';
import type { S3Bucket } from './s3.ts';

export interface SimTableFilesCtx {
  readonly aws: Aws;
  readonly worker: Worker;
  readonly classify?: Classify;
  readonly bucket: S3Bucket;
  /** The table's root in the bucket, without a trailing slash. */
  readonly prefix: string;
}

export class SimTableFiles implements TableFiles {
  constructor(protected readonly ctx: SimTableFilesCtx) {}

  private call<T>(op: string, what: string, apply: () => T): Promise<T> {
    return this.ctx.aws.send(this.ctx.worker, 's3', op, apply).catch((error: unknown) => {
      throw (this.ctx.classify ?? classifyAwsError)(what, error);
    });
  }

  async open(path: string): Promise<RandomAccessObject> {
    const key = `${this.ctx.prefix}/${path}`;
    const bytes = fromBody(
      await this.call(`get ${key}`, 'read bronze data file', () => this.ctx.bucket.get(key)),
    );
    return {
      byteLength: bytes.byteLength,
      slice: async (start, end = bytes.byteLength) => bytes.slice(start, end).buffer as ArrayBuffer,
    };
  }

  async *list(): AsyncIterable<ListedFile> {
    const root = `${this.ctx.prefix}/`;
    const listed = await this.call(`list ${root}`, 'list bronze data files', () =>
      [...this.ctx.bucket.objects]
        .filter(([k]) => k.startsWith(root) && !k.startsWith(`${root}_delta_log/`))
        .map(([k, body]) => ({
          path: k.slice(root.length),
          size: body.length,
          lastModified: this.ctx.bucket.modified.get(k) ?? 0,
        }))
        .sort((a, b) => (a.path < b.path ? -1 : 1)),
    );
    yield* this.listed(listed);
  }

  /** What the listing gives the caller (a variant may misreport it). */
  protected listed(files: ListedFile[]): ListedFile[] {
    return files;
  }

  async delete(paths: readonly string[]): Promise<void> {
    const keys = paths.map((p) => `${this.ctx.prefix}/${p}`);
    await this.call(`deleteObjects ${keys.join(',')}`, 'delete bronze data files', () => {
      for (const key of keys) this.ctx.bucket.delete(key);
    });
  }
}

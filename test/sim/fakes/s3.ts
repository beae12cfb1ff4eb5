/**
 * S3 in memory: strongly consistent reads after writes (S3 since Dec 2020), `If-None-Match: *` answered
 * 412 when the key exists and 409 ConditionalRequestConflict while another conditional write to the key
 * is in flight; and the BatchStore port over it, written as the S3 adapter is.
 */

import type { BatchStore } from '../../../shared/ingestion/batch-store.ts';
import {
  type Manifest,
  manifestKey,
  type StagedList,
  stagedListKey,
} from '../../../shared/ingestion/manifest.ts';
import { classifyAwsError, StagedListMissingError } from '../../../shared/kernel/errors.ts';
import { conditionalCreate, type PutIfAbsentResult } from '../../../shared/kernel/put-if-absent.ts';
import { type Aws, type SdkError, sdkError } from '../faults.ts';
import type { Scheduler, Worker } from '../scheduler.ts';
import type { Classify } from './ledger.ts';

export class S3Bucket {
  readonly objects = new Map<string, string>();
  /** Every body ever written per key: a manifest must never be rewritten with other bytes (I3). */
  readonly history = new Map<string, string[]>();
  /** Conditional writes still "in flight" per key (see put), and whose. */
  private readonly conditional = new Map<
    string,
    { readonly until: number; readonly by: string | undefined }
  >();
  /** Bumped on every write, so the checks re-read manifests only when something changed. */
  writes = 0;
  /** When each object was last written (S3's `LastModified`), simulated ms. */
  readonly modified = new Map<string, number>();
  /** Objects deleted so far (vacuum's, the checks' cue to look at old versions again). */
  deletes = 0;
  /** Each object's user metadata (`x-amz-meta-*`), replaced by the write that sets it, gone with the object. */
  readonly metadata = new Map<string, Readonly<Record<string, string>>>();

  constructor(private readonly scheduler: Scheduler) {}

  /**
   * A conditional write applies at one instant here; for 20 simulated ms after it, another writer's
   * conditional write to the key counts as concurrent with it and gets 409. The writer itself has its
   * answer, so its next conditional write is sequential and gets 412, as on S3 (test/contract/).
   */
  put(key: string, body: string, ifNoneMatch = false, by?: string): void {
    if (ifNoneMatch) {
      const inFlight = this.conditional.get(key);
      if (inFlight && inFlight.until > this.scheduler.now && (by === undefined || inFlight.by !== by))
        throw sdkError('ConditionalRequestConflict', 409);
      if (this.objects.has(key)) throw sdkError('PreconditionFailed', 412);
      this.conditional.set(key, { until: this.scheduler.now + 20, by });
    }
    this.objects.set(key, body);
    this.modified.set(key, this.scheduler.now);
    this.writes += 1;
    this.history.set(key, [...(this.history.get(key) ?? []), body]);
  }

  /** 204 whether or not the key exists. */
  delete(key: string): void {
    if (!this.objects.delete(key)) return;
    this.modified.delete(key);
    this.metadata.delete(key);
    this.writes += 1;
    this.deletes += 1;
  }

  get(key: string): string {
    const body = this.objects.get(key);
    if (body === undefined) throw sdkError('NoSuchKey', 404);
    return body;
  }
}

const status = (error: unknown) => (error as SdkError).$metadata?.httpStatusCode;

export class SimBatchStore implements BatchStore {
  private readonly classify: Classify;
  constructor(private readonly ctx: { bucket: S3Bucket; aws: Aws; worker: Worker; classify?: Classify }) {
    this.classify = ctx.classify ?? classifyAwsError;
  }

  private send<T>(op: string, apply: () => T): Promise<T> {
    return this.ctx.aws.send(this.ctx.worker, 's3', op, apply);
  }

  private async getJson<T>(key: string, op: string): Promise<T | undefined> {
    try {
      return JSON.parse(await this.send(op, () => this.ctx.bucket.get(key))) as T;
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey' || status(error) === 404) return undefined;
      throw this.classify(op, error);
    }
  }

  async putStagedList(list: StagedList): Promise<string> {
    const key = stagedListKey(list.table, list.batchId);
    try {
      await this.send(`putStagedList ${key}`, () => this.ctx.bucket.put(key, JSON.stringify(list)));
    } catch (error) {
      throw this.classify('stage file list', error);
    }
    return key;
  }

  async getStagedList(key: string): Promise<StagedList> {
    const list = await this.getJson<StagedList>(key, 'read staged list');
    if (!list) throw new StagedListMissingError(key);
    return list;
  }

  async deleteStagedList(key: string): Promise<void> {
    try {
      await this.send(`deleteStagedList ${key}`, () => this.ctx.bucket.delete(key));
    } catch (error) {
      throw this.classify('delete staged list', error);
    }
  }

  /** S3's answers read as the S3 adapter reads them (shared/kernel/put-if-absent.ts). */
  putManifestIfAbsent(manifest: Manifest): Promise<PutIfAbsentResult> {
    const key = manifestKey(manifest.table, manifest.version);
    return conditionalCreate(
      () =>
        this.send(`putManifest ${key} for ${manifest.batchIds.join(',')}`, () =>
          this.ctx.bucket.put(key, JSON.stringify(manifest), true, this.ctx.worker.name),
        ),
      (error) => this.classify('write manifest', error),
    );
  }

  getManifest(table: string, version: number): Promise<Manifest | undefined> {
    return this.getJson<Manifest>(manifestKey(table, version), 'read manifest');
  }

  async listManifestVersions(table: string): Promise<number[]> {
    try {
      const prefix = `${table}/_manifests/`;
      return await this.send('listManifests', () =>
        [...this.ctx.bucket.objects.keys()]
          .filter((k) => k.startsWith(prefix))
          .map((k) => Number(k.slice(prefix.length, -'.json'.length)))
          .sort((a, b) => a - b),
      );
    } catch (error) {
      throw this.classify('list manifests', error);
    }
  }
}

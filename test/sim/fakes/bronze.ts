/**
 * The bronze sink's ports over the simulation's fakes, written as the adapters are
 * (shared/bronze/aws/s3-delta-store.ts, s3-source-objects.ts, dynamodb-sink-cursor.ts, sqs-sink-nudger.ts): the Delta table lives in the
 * same S3 bucket as the manifests, its log entries written with `If-None-Match: *` (S3's 412 and 409 read
 * by the adapter's own mapping, shared/kernel/put-if-absent.ts), a checkpoint read by ranges and written as one multipart upload
 * (visible whole at its complete); the cursor is a conditional put on the ledger table; every call goes
 * through the SDK fault model on behalf of one worker, so it can be throttled, refused, or applied with its
 * answer lost, and the worker can crash between any two of them.
 */

import { cursorFromItem, cursorItem } from '../../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { logKey } from '../../../shared/bronze/delta-log.ts';
import { sameETag } from '../../../shared/bronze/landing-write.ts';
import type {
  DeltaStore,
  LogFileStream,
  RandomAccessObject,
  ReadIdentity,
  SinkCursor,
  SinkCursorStore,
  SinkNudger,
  SourceObjects,
  SourceRead,
} from '../../../shared/bronze/ports.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { classifyAwsError } from '../../../shared/kernel/errors.ts';
import { conditionalCreate, type PutIfAbsentResult } from '../../../shared/kernel/put-if-absent.ts';
import { type Aws, type SdkError, sdkError } from '../faults.ts';
import type { Scheduler, Worker } from '../scheduler.ts';
import type { DynamoTable } from './dynamo.ts';
import { etagOf } from './landing.ts';
import type { Classify } from './ledger.ts';
import type { S3Bucket } from './s3.ts';
import type { SqsQueue } from './sqs.ts';

/** S3Bucket holds strings; binary objects (Parquet) are kept byte for byte as latin1. */
export const toBody = (bytes: Uint8Array | string) =>
  typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('latin1');
export const fromBody = (body: string) => new Uint8Array(Buffer.from(body, 'latin1'));

const status = (error: unknown) => (error as SdkError).$metadata?.httpStatusCode;
const isMissing = (error: unknown) => (error as Error).name === 'NoSuchKey' || status(error) === 404;

interface Ctx {
  readonly aws: Aws;
  readonly worker: Worker;
  readonly classify?: Classify;
}

/**
 * Landing objects (text), read whole in one GetObject and streamed in small chunks, naming the write as
 * S3SourceObjects does (`write`: only while the key has the manifest's ETag). The bucket is unversioned;
 * an object's ETag is its content's (fakes/landing.ts).
 */
export class SimSourceObjects implements SourceObjects {
  constructor(
    private readonly ctx: Ctx & {
      readonly landing: S3Bucket;
      /** Milliseconds every landing read takes on top of the call's latency (a slow source, big files). */
      readonly slowMs?: number;
      readonly scheduler?: Scheduler;
    },
  ) {}

  private async get(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<Uint8Array>> {
    if (this.ctx.slowMs && this.ctx.scheduler)
      await this.ctx.scheduler.sleep(this.ctx.worker, this.ctx.slowMs);
    try {
      const body = await this.ctx.aws.send(this.ctx.worker, 's3', `getObject landing/${ref.key}`, () => {
        const current = this.ctx.landing.get(ref.key);
        if (identity === 'write' && ref.eTag !== null && !sameETag(etagOf(current), ref.eTag))
          throw sdkError('PreconditionFailed', 412);
        return current;
      });
      const eTag = etagOf(body);
      return {
        kind: 'found',
        body: fromBody(body),
        pinned: { ...ref, eTag },
        asNamed: sameETag(eTag, ref.eTag),
      };
    } catch (error) {
      if (isMissing(error)) return { kind: 'missing', reason: 'deleted', detail: 'NoSuchKey' };
      if (status(error) === 412)
        return { kind: 'missing', reason: 'overwritten', detail: 'PreconditionFailed' };
      throw (this.ctx.classify ?? classifyAwsError)('read landing file', error);
    }
  }

  async open(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<AsyncIterable<Uint8Array>>> {
    const read = await this.get(ref, identity);
    if (read.kind === 'missing') return read;
    const bytes = read.body;
    return {
      ...read,
      body: (async function* () {
        for (let i = 0; i < bytes.length; i += 16) yield bytes.slice(i, i + 16);
      })(),
    };
  }

  async openRandom(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<RandomAccessObject>> {
    const read = await this.get(ref, identity);
    if (read.kind === 'missing') return read;
    const bytes = read.body;
    return {
      ...read,
      body: {
        byteLength: bytes.byteLength,
        slice: async (start, end = bytes.byteLength) => bytes.slice(start, end).buffer as ArrayBuffer,
      },
    };
  }
}

/** A Delta table under `prefix` in the bucket, as S3DeltaStore maps its calls and errors. */
export class SimDeltaStore implements DeltaStore {
  constructor(private readonly ctx: Ctx & { readonly bucket: S3Bucket; readonly prefix: string }) {}

  private key(relative: string): string {
    return this.ctx.prefix === '' ? relative : `${this.ctx.prefix}/${relative}`;
  }

  private async call<T>(op: string, what: string, apply: () => T): Promise<T> {
    try {
      return await this.ctx.aws.send(this.ctx.worker, 's3', op, apply);
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)(what, error);
    }
  }

  private async read(key: string, what: string): Promise<string | undefined> {
    try {
      return await this.ctx.aws.send(this.ctx.worker, 's3', `get ${key}`, () => this.ctx.bucket.get(key));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw (this.ctx.classify ?? classifyAwsError)(what, error);
    }
  }

  putDataFile(path: string, bytes: Uint8Array): Promise<void> {
    const key = this.key(path);
    return this.call(`put ${key}`, 'write bronze data file', () => this.ctx.bucket.put(key, toBody(bytes)));
  }

  putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    const key = this.key(logKey(deltaVersion));
    return conditionalCreate(
      () =>
        this.ctx.aws.send(this.ctx.worker, 's3', `putIfAbsent ${key}`, () =>
          this.ctx.bucket.put(key, body, true, this.ctx.worker.name),
        ),
      (error) => (this.ctx.classify ?? classifyAwsError)('write bronze commit', error),
    );
  }

  getCommit(deltaVersion: number): Promise<string | undefined> {
    return this.read(this.key(logKey(deltaVersion)), 'read bronze commit');
  }

  listCommits(after?: number): Promise<number[]> {
    const prefix = this.key('_delta_log/');
    // StartAfter: keys after it in UTF-8 order, which for these ASCII names is string order.
    const startAfter = after === undefined ? '' : this.key(logKey(after));
    return this.call(`list _delta_log after ${after ?? '-'}`, 'list bronze commits', () =>
      [...this.ctx.bucket.objects.keys()]
        .filter(
          (k) => k > startAfter && k.startsWith(prefix) && /^\d{20}\.json$/.test(k.slice(prefix.length)),
        )
        .map((k) => Number(k.slice(prefix.length, -'.json'.length)))
        .sort((a, b) => a - b),
    );
  }

  putLogFile(name: string, body: Uint8Array | string): Promise<void> {
    const key = this.key(`_delta_log/${name}`);
    return this.call(`put ${key}`, 'write bronze log file', () => this.ctx.bucket.put(key, toBody(body)));
  }

  async getLogFile(name: string): Promise<Uint8Array | undefined> {
    const body = await this.read(this.key(`_delta_log/${name}`), 'read bronze log file');
    return body === undefined ? undefined : fromBody(body);
  }

  /** A HeadObject for the size and ETag, then ranged GETs that fail (412) if the object changed since. */
  async openLogFile(name: string): Promise<RandomAccessObject | undefined> {
    const key = this.key(`_delta_log/${name}`);
    const head = await this.read(key, 'read bronze log file');
    if (head === undefined) return undefined;
    const bytes = fromBody(head);
    return {
      byteLength: bytes.byteLength,
      slice: (start, end = bytes.byteLength) =>
        this.call(`getRange ${key}`, 'read bronze log file range', () => {
          if (this.ctx.bucket.get(key) !== head) throw sdkError('PreconditionFailed', 412);
          return bytes.slice(start, end).buffer as ArrayBuffer;
        }),
    };
  }

  /** A multipart upload: parts are sent as they fill, the object appears whole at the complete. */
  streamLogFile(name: string): LogFileStream {
    const key = this.key(`_delta_log/${name}`);
    const parts: Uint8Array[] = [];
    return {
      write: async (chunk) => {
        parts.push(chunk);
      },
      close: () =>
        this.call(`completeUpload ${key}`, 'write bronze log file', () =>
          this.ctx.bucket.put(key, toBody(Buffer.concat(parts))),
        ),
      abort: async () => undefined,
    };
  }
}

export const sinkCursorKey = (table: string) => ({ pk: `SINK#${table}`, sk: 'S' });

/** `SINK#<table>` / `S` on the ledger table, a full-item put conditional on the version it replaces. */
export class SimSinkCursors implements SinkCursorStore {
  constructor(private readonly ctx: Ctx & { readonly db: DynamoTable }) {}

  private async call<T>(op: string, what: string, apply: () => T): Promise<T> {
    try {
      return await this.ctx.aws.send(this.ctx.worker, 'dynamodb', op, apply);
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)(what, error);
    }
  }

  async get(table: string): Promise<SinkCursor> {
    const item = await this.call(`getSinkCursor ${table}`, 'read sink cursor', () =>
      this.ctx.db.get(sinkCursorKey(table)),
    );
    return cursorFromItem(table, item);
  }

  async advance(from: SinkCursor, to: SinkCursor): Promise<boolean> {
    try {
      await this.ctx.aws.send(
        this.ctx.worker,
        'dynamodb',
        `advanceSinkCursor ${to.table} ${from.deltaVersion}->${to.deltaVersion}`,
        () =>
          this.ctx.db.write(
            {
              key: sinkCursorKey(to.table),
              // attribute_not_exists(pk) OR deltaVersion = :from.
              condition: (old) => old === undefined || old.deltaVersion === from.deltaVersion,
              write: () => cursorItem(to),
            },
            this.ctx.worker.name,
          ),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw (this.ctx.classify ?? classifyAwsError)('advance sink cursor', error);
    }
  }

  // cleanSource is not configured in the simulation; its cursor is here so the port is whole.
  async getCleaned(table: string): Promise<number> {
    const item = await this.call(`getCleanCursor ${table}`, 'read clean cursor', () =>
      this.ctx.db.get({ pk: `SINK#${table}`, sk: 'C' }),
    );
    return (item?.cleanedVersion as number | undefined) ?? 0;
  }

  async advanceCleaned(table: string, from: number, to: number): Promise<boolean> {
    try {
      await this.ctx.aws.send(this.ctx.worker, 'dynamodb', `advanceCleanCursor ${table}`, () =>
        this.ctx.db.write(
          {
            key: { pk: `SINK#${table}`, sk: 'C' },
            condition: (old) => ((old?.cleanedVersion as number | undefined) ?? 0) === from,
            write: () => ({ cleanedVersion: to }),
          },
          this.ctx.worker.name,
        ),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw (this.ctx.classify ?? classifyAwsError)('advance clean cursor', error);
    }
  }
}

/** The sink's own `{table}` nudge on its FIFO queue, with SqsSinkNudger's deduplication id. */
export class SimSinkNudger implements SinkNudger {
  constructor(private readonly ctx: Ctx & { readonly queue: SqsQueue }) {}

  async nudge(table: string, afterDeltaVersion: number, cause: string): Promise<void> {
    try {
      await this.ctx.aws.send(this.ctx.worker, 'sqs', `nudge sink ${table} after ${afterDeltaVersion}`, () =>
        this.ctx.queue.send(JSON.stringify({ table }), table, `${table}.${afterDeltaVersion}.${cause}`),
      );
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)('nudge sink', error);
    }
  }
}

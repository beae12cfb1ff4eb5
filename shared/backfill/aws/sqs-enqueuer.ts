import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ObjectRef } from '../../ingestion/model.ts';
import { backoffDelay } from '../../kernel/backoff.ts';
import { type Clock, systemClock } from '../../kernel/clock.ts';
import { classifyAwsError, DefiniteFailureError, ThrottledError } from '../../kernel/errors.ts';
import type { Enqueuer } from '../ports.ts';

/** S3 notification keys are form-URL-encoded ('+' for space, '/' kept): the batcher decodes them so. */
export function encodeNotificationKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/**
 * An S3 notification record (eventVersion 2.1) for a listed object, plus `inlet.table`: the batcher claims
 * it for that table only. The same parser, router and claim as a live event: the ledger decides.
 */
export function backfillRecord(file: ObjectRef, origin: { table: string; run: string }) {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    eventTime: file.eventTime,
    eventName: 'ObjectCreated:Backfill',
    userIdentity: { principalId: `inlet-backfill:${origin.run}` },
    s3: {
      s3SchemaVersion: '1.0',
      bucket: { name: file.bucket },
      object: {
        key: encodeNotificationKey(file.key),
        size: file.size,
        ...(file.eTag ? { eTag: file.eTag } : {}),
        ...(file.versionId ? { versionId: file.versionId } : {}),
      },
    },
    inlet: { table: origin.table, run: origin.run },
  };
}

export interface SqsEnqueuerOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  /** Files per message: fewer SQS requests per file; the batcher claims each record on its own. */
  readonly recordsPerMessage: number;
  /**
   * Largest message body and SendMessageBatch request, in bytes. SQS's API allows 1 MiB since 2025, but a
   * queue's MaximumMessageSize may be lower (256 KiB was the limit and the default before): 256 KiB is safe
   * for both. A message SQS still refuses as too long is split again. @default 262144
   */
  readonly maxBytes?: number;
  /** First backoff between sends of refused entries; doubles per attempt, full jitter. @default 100 */
  readonly retryBaseMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

const SEND_ATTEMPTS = 6;
const RETRY_CAP_MS = 5_000;
const SQS_MAX_BYTES = 262_144;
const SQS_MAX_ENTRIES = 10;

/**
 * SQS's names for "this request or message is too long": SendMessageBatch fails whole with
 * BatchRequestTooLong when its messages together exceed the limit, and refuses an entry over the queue's
 * MaximumMessageSize as a sender fault.
 */
function tooLong(code: string | undefined, message = ''): boolean {
  return (
    /TooLong/i.test(code ?? '') ||
    (/InvalidParameterValue|InvalidMessageContents/.test(code ?? '') && /long|size|bytes/i.test(message))
  );
}

type Message = { readonly records: readonly unknown[]; readonly body: string };

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const messageOf = (records: readonly unknown[]): Message => ({
  records,
  body: JSON.stringify({ Records: records }),
});

/** A message's records in two halves: how a too-long message is sent instead. */
function split(message: Message): Message[] {
  if (message.records.length < 2) {
    throw new DefiniteFailureError(
      `a backfill record alone is over the SQS message size limit (${bytes(message.body)} bytes)`,
    );
  }
  const half = Math.ceil(message.records.length / 2);
  return [messageOf(message.records.slice(0, half)), messageOf(message.records.slice(half))];
}

/**
 * SQS refused some entries every time (throttling or a server fault): a retryable failure for the state
 * machine (Inlet.Throttled), which retries the step with backoff; the step enqueues the page again and the
 * batcher's claim drops what was delivered twice.
 */
function throttled(operation: string, detail: string): ThrottledError {
  return new ThrottledError(`${operation}: ${detail}`);
}

/**
 * SendMessageBatch, up to 10 messages and `maxBytes` a request; messages packed up to `recordsPerMessage`
 * records and `maxBytes`. Entries SQS refused are sent again with backoff; too-long ones are split.
 */
export class SqsEnqueuer implements Enqueuer {
  private readonly maxBytes: number;
  private readonly clock: Clock;

  constructor(private readonly options: SqsEnqueuerOptions) {
    this.maxBytes = options.maxBytes ?? SQS_MAX_BYTES;
    this.clock = options.clock ?? systemClock;
  }

  async enqueue(files: readonly ObjectRef[], origin: { table: string; run: string }): Promise<void> {
    let pending = this.pack(files.map((f) => backfillRecord(f, origin)));
    const backoff = { base: this.options.retryBaseMs ?? 100, cap: RETRY_CAP_MS, jitter: 'full' } as const;
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > 1) await this.clock.sleep(backoffDelay(backoff, attempt, this.clock.random));
      const again: Message[] = [];
      const codes = new Set<string>();
      for (const request of this.requests(pending)) {
        for (const refused of await this.send(request)) {
          if (refused.tooLong) again.push(...split(refused.message));
          else {
            // A too-long split is progress, not a failed attempt; only other refusals count towards the cap.
            again.push(refused.message);
            codes.add(refused.code);
          }
        }
      }
      if (codes.size > 0 && attempt >= SEND_ATTEMPTS) {
        throw throttled(
          'enqueue backfill records',
          `SQS refused ${again.length} messages ${SEND_ATTEMPTS} times: ${[...codes].join(', ')}`,
        );
      }
      if (codes.size === 0) attempt = 0;
      pending = again;
    }
  }

  /** Records into messages: at most `recordsPerMessage` each, and never over `maxBytes`. */
  private pack(records: readonly unknown[]): Message[] {
    const messages: Message[] = [];
    let current: unknown[] = [];
    let size = bytes('{"Records":[]}');
    for (const record of records) {
      const recordBytes = bytes(JSON.stringify(record)) + 1;
      if (
        current.length > 0 &&
        (current.length >= this.options.recordsPerMessage || size + recordBytes > this.maxBytes)
      ) {
        messages.push(messageOf(current));
        current = [];
        size = bytes('{"Records":[]}');
      }
      current.push(record);
      size += recordBytes;
    }
    if (current.length > 0) messages.push(messageOf(current));
    return messages;
  }

  /** Messages into requests: at most 10 entries and `maxBytes` together. */
  private requests(messages: readonly Message[]): Message[][] {
    const requests: Message[][] = [];
    let current: Message[] = [];
    let size = 0;
    for (const message of messages) {
      const size1 = bytes(message.body);
      if (current.length > 0 && (current.length >= SQS_MAX_ENTRIES || size + size1 > this.maxBytes)) {
        requests.push(current);
        current = [];
        size = 0;
      }
      current.push(message);
      size += size1;
    }
    if (current.length > 0) requests.push(current);
    return requests;
  }

  /** One SendMessageBatch; returns the messages SQS refused and why. */
  private async send(
    messages: readonly Message[],
  ): Promise<Array<{ message: Message; tooLong: boolean; code: string }>> {
    let result: SendMessageBatchCommandOutput;
    try {
      result = await this.options.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), MessageBody: m.body })),
        }),
      );
    } catch (error) {
      const { name, message } = error as { name?: string; message?: string };
      if (tooLong(name, message))
        return messages.map((m) => ({ message: m, tooLong: true, code: name ?? '' }));
      throw classifyAwsError('enqueue backfill records', error);
    }
    return (result.Failed ?? []).map((failure) => {
      const message = messages[Number(failure.Id)] as Message;
      const code = failure.Code ?? 'unknown';
      if (failure.SenderFault && tooLong(code, failure.Message ?? 'too long'))
        return { message, tooLong: true, code };
      if (failure.SenderFault) {
        // Not a size problem: the request is wrong and sending it again cannot help.
        throw new DefiniteFailureError(`SQS refused a backfill message: ${code}: ${failure.Message ?? ''}`);
      }
      return { message, tooLong: false, code };
    });
  }
}

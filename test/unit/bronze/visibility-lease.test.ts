import {
  ChangeMessageVisibilityBatchCommand,
  type ChangeMessageVisibilityBatchCommandInput,
  GetQueueUrlCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VisibilityLease } from '../../../shared/bronze/visibility-lease.ts';
import { SqsRetryScheduler } from '../../../shared/ingestion/aws/sqs-retry-scheduler.ts';
import { VisibilityRefusedError } from '../../../shared/kernel/errors.ts';
import type { Log } from '../../../shared/kernel/log.ts';
import type {
  MessageVisibility,
  RefusedVisibility,
  RetryLater,
} from '../../../shared/kernel/message-visibility.ts';
import { sinkEvent } from './memory.ts';

const ARN = 'arn:aws:sqs:us-east-1:000000000000:sink.fifo';

/** Messages r0, r1 of table `a` and r2 of table `b`, as the sink's event carries them. */
function records(groups: readonly string[] = ['a', 'a', 'b']): SQSRecord[] {
  const event = sinkEvent(groups.map((table) => JSON.stringify({ table })));
  event.Records.forEach((r, i) => {
    r.attributes.MessageGroupId = groups[i] as string;
  });
  return event.Records;
}

/** SQS as the lease sees it: every call recorded at the (fake) time it was made. */
class FakeQueue implements MessageVisibility {
  readonly calls: Array<{ at: number; handles: string[]; seconds: number[] }> = [];
  /** Per receipt handle: what SQS answers that entry (every time). */
  readonly refusals = new Map<string, Omit<RefusedVisibility, 'receiptHandle'>>();
  /** Calls still to fail whole (a throttle after the SDK's retries). */
  failCalls = 0;
  /** When set, calls wait for it (a call in flight); an abort rejects them as the SDK does. */
  hold: Promise<void> | undefined;
  aborted = 0;

  async changeVisibility(messages: readonly RetryLater[], signal?: AbortSignal) {
    this.calls.push({
      at: Date.now(),
      handles: messages.map((m) => m.receiptHandle),
      seconds: messages.map((m) => m.seconds),
    });
    if (this.hold) {
      const held = this.hold;
      await new Promise<void>((resolve, reject) => {
        held.then(resolve);
        signal?.addEventListener('abort', () => {
          this.aborted += 1;
          reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        });
      });
    }
    if (this.failCalls > 0) {
      this.failCalls -= 1;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
    return messages.flatMap((m) => {
      const refused = this.refusals.get(m.receiptHandle);
      return refused ? [{ receiptHandle: m.receiptHandle, ...refused }] : [];
    });
  }
}

function recordingLog() {
  const warnings: Array<{ message: string; extra?: Record<string, unknown> }> = [];
  const log: Log = {
    debug() {},
    info() {},
    warn: (message, extra) => void warnings.push({ message, ...(extra ? { extra } : {}) }),
    error() {},
  };
  return { log, warnings };
}

describe('the visibility lease (a heartbeat on the messages an invocation holds)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function lease(queue: FakeQueue, recs = records()) {
    const { log, warnings } = recordingLog();
    return { lease: new VisibilityLease(recs, { visibility: queue, seconds: 60, log }), warnings };
  }

  it('sets every message to the lease at once, then extends it every third of the lease while the invocation runs', async () => {
    const queue = new FakeQueue();
    const { lease: held } = lease(queue);
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.calls).toEqual([{ at: 0, handles: ['r0', 'r1', 'r2'], seconds: [60, 60, 60] }]);

    await vi.advanceTimersByTimeAsync(19_999);
    expect(queue.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.calls.map((c) => c.at)).toEqual([0, 20_000]);
    await vi.advanceTimersByTimeAsync(100_000);
    // Each beat gives 60 s from itself: the messages are never closer than 40 s to reappearing.
    expect(queue.calls.map((c) => c.at)).toEqual([0, 20_000, 40_000, 60_000, 80_000, 100_000, 120_000]);
    expect(queue.calls.every((c) => c.handles.join() === 'r0,r1,r2')).toBe(true);
    await held.end();
  });

  it('stops when the invocation ends: no call after it, no timer left running', async () => {
    const queue = new FakeQueue();
    const { lease: held } = lease(queue);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(vi.getTimerCount()).toBe(1);

    await held.end();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(queue.calls.map((c) => c.at)).toEqual([0, 20_000]);
    // Ending twice is harmless.
    await held.end();
  });

  it('cancels a beat still in flight when the invocation ends, and returns only once it has settled', async () => {
    const queue = new FakeQueue();
    const { lease: held } = lease(queue);
    await vi.advanceTimersByTimeAsync(0);
    queue.hold = new Promise<void>(() => {}); // the next call never answers (a stuck connection)
    await vi.advanceTimersByTimeAsync(20_000);
    expect(queue.calls).toHaveLength(2);

    await held.end();
    expect(queue.aborted).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops a message SQS refuses as no longer held (sender fault), naming its table; tries again one SQS failed', async () => {
    const queue = new FakeQueue();
    // r0's handle went stale: its lease lapsed and another consumer received it (or it was deleted).
    queue.refusals.set('r0', { code: 'ReceiptHandleIsInvalid', senderFault: true, message: 'stale' });
    // r2: SQS's own failure for that entry.
    queue.refusals.set('r2', { code: 'InternalError', senderFault: false, message: 'try again' });
    const { lease: held, warnings } = lease(queue);
    await vi.advanceTimersByTimeAsync(20_000);

    expect(queue.calls.map((c) => c.handles.join())).toEqual(['r0,r1,r2', 'r1,r2']);
    expect(warnings).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^visibility lease lost/),
        extra: expect.objectContaining({ table: 'a', code: 'ReceiptHandleIsInvalid' }),
      }),
      expect.objectContaining({
        message: expect.stringMatching(/^visibility lease not extended/),
        extra: expect.objectContaining({ table: 'b', code: 'InternalError' }),
      }),
      expect.objectContaining({ extra: expect.objectContaining({ table: 'b' }) }),
    ]);
    await held.end();
  });

  it('goes on after a beat that failed whole (throttled, no answer): the next beat extends every message again', async () => {
    const queue = new FakeQueue();
    queue.failCalls = 2;
    const { lease: held, warnings } = lease(queue);
    await vi.advanceTimersByTimeAsync(40_000);
    expect(queue.calls.map((c) => [c.at, c.handles.join()])).toEqual([
      [0, 'r0,r1,r2'],
      [20_000, 'r0,r1,r2'],
      [40_000, 'r0,r1,r2'],
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^could not extend the visibility lease/),
      expect.stringMatching(/^could not extend the visibility lease/),
    ]);
    await held.end();
  });

  it('leases a message received again after a crash longer each time (doubling, capped at the queue timeout), beating as often', async () => {
    const queue = new FakeQueue();
    const recs = records(['a', 'a', 'b', 'b']);
    // r0: first receive; r1: its invocation died once; r2: three times; r3: so often the cap applies.
    [1, 2, 4, 9].forEach((count, i) => {
      (recs[i] as SQSRecord).attributes.ApproximateReceiveCount = String(count);
    });
    const { log } = recordingLog();
    const held = new VisibilityLease(recs, { visibility: queue, seconds: 60, maxSeconds: 5400, log });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(queue.calls.map((c) => c.seconds)).toEqual([
      [60, 120, 480, 5400],
      [60, 120, 480, 5400],
    ]);
    await held.end();
  });

  it('ends by itself once SQS has refused every message: nothing left to hold, no timer', async () => {
    const queue = new FakeQueue();
    for (const r of ['r0', 'r1', 'r2'])
      queue.refusals.set(r, { code: 'MessageNotInflight', senderFault: true, message: 'not in flight' });
    const { lease: held } = lease(queue);
    await vi.advanceTimersByTimeAsync(100_000);
    expect(queue.calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    await held.end();
  });
});

describe('ChangeMessageVisibilityBatch (the lease and the backoff on SQS)', () => {
  /** An SQS client that answers GetQueueUrl, and each batch entry by `refuse(receiptHandle)`. */
  function sqs(refuse: (handle: string) => boolean) {
    const batches: ChangeMessageVisibilityBatchCommandInput[] = [];
    let urlLookups = 0;
    const client = {
      send: async (command: unknown) => {
        if (command instanceof GetQueueUrlCommand) {
          urlLookups += 1;
          return { QueueUrl: 'https://sqs/000000000000/sink.fifo' };
        }
        if (!(command instanceof ChangeMessageVisibilityBatchCommand)) throw new Error('unexpected');
        batches.push(command.input);
        const entries = command.input.Entries ?? [];
        return {
          Successful: entries.filter((e) => !refuse(e.ReceiptHandle ?? '')).map((e) => ({ Id: e.Id })),
          Failed: entries
            .filter((e) => refuse(e.ReceiptHandle ?? ''))
            .map((e) => ({ Id: e.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true, Message: 'stale' })),
        };
      },
    } as unknown as SQSClient;
    return { client, batches, lookups: () => urlLookups };
  }

  const messages = (n: number, seconds = 60): RetryLater[] =>
    Array.from({ length: n }, (_, i) => ({ receiptHandle: `h${i}`, queueArn: ARN, seconds }));

  it('sends at most 10 entries a call and maps each refused entry back to its receipt handle', async () => {
    const { client, batches, lookups } = sqs((h) => h === 'h3' || h === 'h11');
    const refused = await new SqsRetryScheduler(client).changeVisibility(messages(12));

    expect(batches.map((b) => b.Entries?.length)).toEqual([10, 2]);
    expect(batches[0]?.QueueUrl).toBe('https://sqs/000000000000/sink.fifo');
    expect(batches[1]?.Entries?.map((e) => [e.ReceiptHandle, e.VisibilityTimeout])).toEqual([
      ['h10', 60],
      ['h11', 60],
    ]);
    expect(refused.map((r) => [r.receiptHandle, r.code, r.senderFault])).toEqual([
      ['h3', 'ReceiptHandleIsInvalid', true],
      ['h11', 'ReceiptHandleIsInvalid', true],
    ]);
    expect(lookups()).toBe(1);
  });

  it('fails a backoff SQS refused for some messages, so the handler logs it (they keep the visibility they had)', async () => {
    const { client } = sqs((h) => h === 'h1');
    const error = await new SqsRetryScheduler(client).retryLater(messages(2, 5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisibilityRefusedError);
    expect((error as VisibilityRefusedError).refused.map((r) => r.receiptHandle)).toEqual(['h1']);
  });
});

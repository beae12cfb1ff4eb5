/**
 * SQS in memory. Standard: at-least-once (a message in flight may be delivered again), any order.
 * FIFO: a group's messages one in-flight batch at a time, in order; MessageDeduplicationId drops a re-send
 * within 5 minutes. Both: visibility timeout, redelivery, maxReceiveCount then the DLQ, and a delete with a
 * stale receipt handle that succeeds without deleting (SQS DeleteMessage docs).
 */

import type {
  BatchCommittedEvent,
  CommitQueue,
  EventPublisher,
} from '../../../shared/ingestion/batch-store.ts';
import {
  classifyAwsError,
  UnknownOutcomeError,
  VisibilityRefusedError,
} from '../../../shared/kernel/errors.ts';
import type {
  MessageVisibility,
  RefusedVisibility,
  RetryLater,
  RetryScheduler,
} from '../../../shared/kernel/message-visibility.ts';
import { type Aws, sdkError } from '../faults.ts';
import type { Rng, Scheduler, Worker } from '../scheduler.ts';
import type { Classify } from './ledger.ts';

export interface Message {
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: number;
  readonly group?: string;
  receiveCount: number;
  visibleAt: number;
  /** Copies a standard queue will still hand out while the message is in flight (at-least-once). */
  extraCopies: number;
  receipt: number;
}

export interface Received {
  readonly message: Message;
  readonly receipt: number;
}

const DEDUP_WINDOW_MS = 5 * 60_000;

export class SqsQueue {
  messages: Message[] = [];
  readonly dlq: Message[] = [];
  private readonly dedup = new Map<string, number>();
  private nextId = 0;
  private nextReceipt = 0;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    readonly rng: Rng,
    readonly options: { fifo: boolean; visibilityMs: number; maxReceiveCount: number; duplicateRate: number },
  ) {}

  send(body: string, group?: string, dedupId?: string): void {
    const now = this.scheduler.now;
    if (dedupId !== undefined) {
      const last = this.dedup.get(dedupId);
      if (last !== undefined && now - last < DEDUP_WINDOW_MS) return;
      this.dedup.set(dedupId, now);
    }
    this.nextId += 1;
    this.messages.push({
      messageId: `${this.name}-${this.nextId}`,
      body,
      sentAt: now,
      group,
      receiveCount: 0,
      visibleAt: now,
      extraCopies: !this.options.fifo && this.rng.chance(this.options.duplicateRate) ? 1 : 0,
      receipt: -1,
    });
  }

  private inFlight = (m: Message) => m.visibleAt > this.scheduler.now;

  receive(max: number): Received[] {
    const { fifo, visibilityMs, maxReceiveCount } = this.options;
    const now = this.scheduler.now;
    let candidates: Message[];
    if (fifo) {
      const blocked = new Set(this.messages.filter(this.inFlight).map((m) => m.group));
      candidates = this.messages.filter((m) => !blocked.has(m.group));
    } else {
      // A standard queue may hand out a message that is already in flight elsewhere, in any order.
      candidates = this.rng.shuffle(this.messages.filter((m) => !this.inFlight(m) || m.extraCopies > 0));
    }
    const out: Received[] = [];
    for (const m of candidates) {
      if (out.length >= max) break;
      if (fifo && out.some((r) => r.message.group !== m.group && this.rng.chance(0.5))) continue;
      if (m.receiveCount >= maxReceiveCount) {
        this.messages = this.messages.filter((x) => x !== m);
        this.dlq.push(m);
        this.scheduler.log(`${this.name} ${m.messageId} -> DLQ after ${m.receiveCount} receives`);
        if (fifo) break; // the group's next message waits for the next poll
        continue;
      }
      if (this.inFlight(m)) m.extraCopies -= 1;
      m.receiveCount += 1;
      m.visibleAt = now + visibilityMs;
      this.nextReceipt += 1;
      m.receipt = this.nextReceipt;
      out.push({ message: m, receipt: m.receipt });
    }
    return out;
  }

  /** A stale handle (the message was received again since) deletes nothing. */
  delete(received: Received): void {
    if (received.message.receipt !== received.receipt) return;
    this.messages = this.messages.filter((m) => m !== received.message);
  }

  /**
   * ChangeMessageVisibility: only the latest receipt handle of a message still in flight counts; SQS refuses
   * the others (`ReceiptHandleIsInvalid`: received again since, or deleted; `MessageNotInflight`: visible).
   */
  changeVisibility(receipt: number, ms: number): 'ReceiptHandleIsInvalid' | 'MessageNotInflight' | undefined {
    const m = this.messages.find((x) => x.receipt === receipt);
    if (!m) return 'ReceiptHandleIsInvalid';
    if (m.visibleAt <= this.scheduler.now) return 'MessageNotInflight';
    m.visibleAt = this.scheduler.now + ms;
    return undefined;
  }

  get size(): number {
    return this.messages.length;
  }
}

/**
 * ChangeMessageVisibilityBatch through the SDK fault model: each entry answered on its own. `lost` says
 * whether a call never reaches SQS (every attempt fails): the sink's heartbeat lost in some seeds.
 */
export class SimMessageVisibility implements MessageVisibility, RetryScheduler {
  constructor(private readonly ctx: { queue: SqsQueue; aws: Aws; worker: Worker; lost?: () => boolean }) {}

  async changeVisibility(messages: readonly RetryLater[]): Promise<readonly RefusedVisibility[]> {
    const lost = this.ctx.lost?.() ?? false;
    const op = `changeVisibility ${this.ctx.queue.name}${lost ? ' (lost)' : ''}`;
    return this.ctx.aws.send(this.ctx.worker, 'sqs', op, () => {
      if (lost) throw sdkError('InternalServerError', 500);
      return messages.flatMap((m) => {
        const code = this.ctx.queue.changeVisibility(Number(m.receiptHandle), m.seconds * 1000);
        return code ? [{ receiptHandle: m.receiptHandle, code, senderFault: true, message: code }] : [];
      });
    });
  }

  async retryLater(messages: readonly RetryLater[]): Promise<void> {
    const refused = await this.changeVisibility(messages);
    if (refused.length > 0) throw new VisibilityRefusedError(refused);
  }
}

/** Entries of a SendMessageBatch that SQS refused (throttled) while the call succeeded. */
const ENTRY_FAILURE_RATE = 0.05;

export class SimCommitQueue implements CommitQueue {
  constructor(
    private readonly ctx: {
      queue: SqsQueue;
      aws: Aws;
      worker: Worker;
      classify?: Classify;
      faulty: () => boolean;
    },
  ) {}

  async requestCommit(table: string, batchId: string): Promise<void> {
    try {
      await this.ctx.aws.send(this.ctx.worker, 'sqs', `requestCommit ${table}/${batchId}`, () =>
        this.ctx.queue.send(JSON.stringify({ table, batchId }), table, batchId),
      );
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)('request commit', error);
    }
  }

  async requestCommits(table: string, batchIds: readonly string[], resendId: string): Promise<string[]> {
    const rejected: string[] = [];
    for (let i = 0; i < batchIds.length; i += 10) {
      const chunk = batchIds.slice(i, i + 10);
      try {
        const failed = await this.ctx.aws.send(
          this.ctx.worker,
          'sqs',
          `requestCommits ${table}/${chunk.join(',')}`,
          () =>
            chunk.filter((batchId) => {
              if (this.ctx.faulty() && this.ctx.queue.rng.chance(ENTRY_FAILURE_RATE)) return true;
              this.ctx.queue.send(JSON.stringify({ table, batchId }), table, `${batchId}.${resendId}`);
              return false;
            }),
        );
        rejected.push(...failed);
      } catch (error) {
        throw (this.ctx.classify ?? classifyAwsError)('request commits', error);
      }
    }
    return rejected;
  }
}

/** EventBridge: PutEvents may answer 200 with FailedEntryCount > 0 (a partial failure). */
export class EventBus {
  readonly events: BatchCommittedEvent[] = [];
  constructor(
    readonly failureRate: () => number,
    private readonly rng: Rng,
    /** The rules' targets: what an accepted event is delivered to. */
    private readonly deliver: (event: BatchCommittedEvent) => void = () => {},
  ) {}
  put(event: BatchCommittedEvent): { FailedEntryCount: number } {
    if (this.rng.chance(this.failureRate())) return { FailedEntryCount: 1 };
    this.events.push(event);
    this.deliver(event);
    return { FailedEntryCount: 0 };
  }
}

export class SimEventPublisher implements EventPublisher {
  constructor(private readonly ctx: { bus: EventBus; aws: Aws; worker: Worker; classify?: Classify }) {}

  async batchCommitted(event: BatchCommittedEvent): Promise<void> {
    let failed = 0;
    try {
      failed = (
        await this.ctx.aws.send(this.ctx.worker, 'events', 'putEvents', () => this.ctx.bus.put(event))
      ).FailedEntryCount;
    } catch (error) {
      throw (this.ctx.classify ?? classifyAwsError)('publish BatchCommitted', error);
    }
    if (failed > 0)
      throw new UnknownOutcomeError(
        `EventBridge rejected BatchCommitted for ${event.table} v${event.version}`,
      );
  }
}

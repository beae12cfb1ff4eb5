import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import {
  ChangeMessageVisibilityBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

interface Held {
  readonly queueUrl: string;
  readonly receiptHandles: readonly string[];
  /**
   * Receives of a FIFO queue sent and not yet answered, by `ReceiveRequestAttemptId`, each with when it was
   * sent: a kill between SQS taking messages in flight and the answer arriving leaves nothing else to name
   * them by.
   */
  readonly attempts?: readonly { readonly id: string; readonly at: number }[];
}

/** How long SQS lets a receive be retried by its `ReceiveRequestAttemptId` (ReceiveMessage, API reference). */
const ATTEMPT_MS = 5 * 60_000;

/**
 * The messages local mode's event source mappings hold (received, their batch not yet answered), kept in a
 * file so the next run can give back what a killed one held. On AWS, Lambda's pollers outlive any crash of
 * the functions: a function that dies gives its messages back through its own lease (the bronze sink) or
 * the queue's visibility timeout. A local run killed whole takes its pollers down with its functions,
 * which AWS's never are, and the messages they had received and not yet handed to a function that set its
 * lease would wait out the queue's visibility timeout (the sink queue's is 90 minutes). So a resumed run
 * makes them visible again (`ChangeMessageVisibility` to 0): what is redelivered is harmless, as any
 * redelivery (the ledger and the sink's cursor decide what is done). A kill can also land while a receive
 * is answered: SQS has taken its messages in flight and the run never learns their receipt handles. On a
 * FIFO queue (the commit and sink queues, whose groups such a message blocks) each receive carries a
 * `ReceiveRequestAttemptId` recorded before it is sent; SQS answers a retry of the same attempt, within 5
 * minutes, with the same messages and receipt handles, and the resumed run gives those back too.
 */
export class HeldMessages {
  private readonly held = new Map<number, Held>();
  private next = 0;

  constructor(private readonly file?: string) {}

  /** Records a batch received from `queueUrl`; `release` it once the batch is answered (or failed). */
  hold(queueUrl: string, receiptHandles: readonly string[]): number {
    const id = ++this.next;
    this.held.set(id, { queueUrl, receiptHandles });
    this.save();
    return id;
  }

  release(id: number): void {
    if (this.held.delete(id)) this.save();
  }

  /**
   * Before a receive from a FIFO queue: records an attempt id for it (under `id` from `hold`, or a new
   * batch when `id` is undefined) and returns both; the caller sends the receive with that
   * `ReceiveRequestAttemptId`, then calls `received`.
   */
  attempt(queueUrl: string, id?: number): { readonly id: number; readonly attemptId: string } {
    const batch = id ?? ++this.next;
    const entry = this.held.get(batch) ?? { queueUrl, receiptHandles: [] };
    const attemptId = randomUUID();
    this.held.set(batch, {
      ...entry,
      attempts: [...(entry.attempts ?? []), { id: attemptId, at: Date.now() }],
    });
    this.save();
    return { id: batch, attemptId };
  }

  /** The answer to an attempt arrived: its receipt handles replace it (one write). */
  received(id: number, attemptId: string, receiptHandles: readonly string[]): void {
    const entry = this.held.get(id);
    if (!entry) return;
    const attempts = (entry.attempts ?? []).filter((a) => a.id !== attemptId);
    this.held.set(id, {
      queueUrl: entry.queueUrl,
      receiptHandles: [...entry.receiptHandles, ...receiptHandles],
      ...(attempts.length > 0 ? { attempts } : {}),
    });
    this.save();
  }

  /**
   * Gives back what a run that did not stop (killed, crashed) left held: each message visible again, each
   * failure ignored (a handle that is stale, a message deleted since). Returns how many it asked for.
   */
  async giveBackLeftovers(sqs: SQSClient): Promise<number> {
    if (!this.file || !existsSync(this.file)) return 0;
    let left: Held[] = [];
    try {
      left = JSON.parse(readFileSync(this.file, 'utf8')) as Held[];
    } catch {
      // A file cut short by the kill: what it named waits out its visibility timeout, as before.
    }
    let asked = 0;
    for (const { queueUrl, receiptHandles: handles, attempts = [] } of left) {
      const receiptHandles = [...handles];
      for (const attempt of attempts) {
        if (Date.now() - attempt.at >= ATTEMPT_MS) continue;
        const { Messages = [] } = await sqs
          .send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              ReceiveRequestAttemptId: attempt.id,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 0,
            }),
          )
          .catch(() => ({ Messages: [] }));
        for (const m of Messages) if (m.ReceiptHandle) receiptHandles.push(m.ReceiptHandle);
      }
      for (let i = 0; i < receiptHandles.length; i += 10) {
        const chunk = receiptHandles.slice(i, i + 10);
        asked += chunk.length;
        await sqs
          .send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: queueUrl,
              Entries: chunk.map((ReceiptHandle, j) => ({
                Id: String(j),
                ReceiptHandle,
                VisibilityTimeout: 0,
              })),
            }),
          )
          .catch(() => undefined);
      }
    }
    rmSync(this.file, { force: true });
    this.save();
    return asked;
  }

  private save(): void {
    if (!this.file) return;
    if (this.held.size === 0) {
      rmSync(this.file, { force: true });
      return;
    }
    // Whole or not at all: a kill mid-write leaves the previous list.
    writeFileSync(`${this.file}.tmp`, JSON.stringify([...this.held.values()]));
    renameSync(`${this.file}.tmp`, this.file);
  }
}

import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';

interface Held {
  readonly queueUrl: string;
  readonly receiptHandles: readonly string[];
}

/**
 * The messages local mode's event source mappings hold (received, their batch not yet answered), kept in a
 * file so the next run can give back what a killed one held. On AWS, Lambda's pollers outlive any crash of
 * the functions: a function that dies gives its messages back through its own lease (the bronze sink) or
 * the queue's visibility timeout. A local run killed whole takes its pollers down with its functions,
 * which AWS's never are, and the messages they had received and not yet handed to a function that set its
 * lease would wait out the queue's visibility timeout (the sink queue's is 90 minutes). So a resumed run
 * makes them visible again (`ChangeMessageVisibility` to 0): what is redelivered is harmless, as any
 * redelivery (the ledger and the sink's cursor decide what is done).
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
    for (const { queueUrl, receiptHandles } of left) {
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

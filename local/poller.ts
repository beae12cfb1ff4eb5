import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { HeldMessages } from './held-messages.ts';

export interface PollOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn?: string;
  /** Lambda's BatchSize: receives of 10 are repeated until this many or the queue is empty. @default 10 */
  readonly batchSize?: number;
  /** Long-poll seconds for the first receive. @default 0 */
  readonly waitSeconds?: number;
  /** Lambda's MaximumBatchingWindowInSeconds: keep receiving this long to fill the batch. @default 0 */
  readonly batchingWindowMs?: number;
  /** Where a batch is recorded while held, so a run started after this one was killed can give it back. */
  readonly held?: HeldMessages;
}

export interface PollResult {
  readonly received: number;
  readonly failed: number;
  /** The handler threw (or the invocation died): nothing was deleted, as with a crashed Lambda. */
  readonly crashed: boolean;
  /** What the handler threw, when it crashed. */
  readonly error?: unknown;
}

function toRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
      ...(attributes.MessageDeduplicationId
        ? { MessageDeduplicationId: attributes.MessageDeduplicationId }
        : {}),
      ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] ?? 'us-east-1',
  };
}

/**
 * One invocation of Lambda's SQS event source mapping: receive a batch, call the handler, delete what
 * succeeded (ReportBatchItemFailures), leave the rest to reappear after the visibility timeout.
 */
export async function pollOnce(
  options: PollOptions,
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>,
): Promise<PollResult> {
  const receiver = new BatchReceiver(options);
  try {
    const messages = await receiver.receiveBatch();
    if (messages.length === 0) return { received: 0, failed: 0, crashed: false };
    const queueArn =
      options.queueArn ?? `arn:aws:sqs:us-east-1:000000000000:${options.queueUrl.split('/').pop()}`;
    let response: SQSBatchResponse | undefined;
    try {
      response = await handler({ Records: messages.map((m) => toRecord(m, queueArn)) });
    } catch (error) {
      return { received: messages.length, failed: messages.length, crashed: true, error };
    }
    const failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    const done = messages.filter((m) => !failedIds.has(m.MessageId ?? ''));
    for (let i = 0; i < done.length; i += 10) {
      await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.slice(i, i + 10).map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    return { received: messages.length, failed: failedIds.size, crashed: false };
  } finally {
    receiver.release();
  }
}

/**
 * Receives one batch as Lambda's poller does, recording it in `held` while it is held. A FIFO receive is
 * recorded (its `ReceiveRequestAttemptId`) before it is sent, so that a run killed while SQS answers it can
 * still give its messages back (held-messages.ts); a standard queue's batch once it is received.
 */
class BatchReceiver {
  private held: number | undefined;
  private readonly attempts: HeldMessages | undefined;

  constructor(private readonly options: PollOptions) {
    this.attempts = options.queueUrl.endsWith('.fifo') ? options.held : undefined;
  }

  /**
   * Like Lambda: nothing received, no invocation; the batching window starts with the first message and
   * the function is invoked when the batch is full or the window is over, whatever still trickles in.
   */
  async receiveBatch(): Promise<Message[]> {
    const { options } = this;
    const batchSize = options.batchSize ?? 10;
    const messages = await this.receive(batchSize, options.waitSeconds ?? 0);
    const deadline = Date.now() + (options.batchingWindowMs ?? 0);
    while (messages.length > 0 && messages.length < batchSize && Date.now() < deadline) {
      const more = await this.receive(batchSize - messages.length, 0);
      if (more.length > 0) messages.push(...more);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (messages.length > 0 && this.held === undefined)
      this.held = options.held?.hold(
        options.queueUrl,
        messages.map((m) => m.ReceiptHandle ?? ''),
      );
    return messages;
  }

  release(): void {
    if (this.held !== undefined) this.options.held?.release(this.held);
  }

  private async receive(count: number, wait: number): Promise<Message[]> {
    const attempt = this.attempts?.attempt(this.options.queueUrl, this.held);
    if (attempt) this.held = attempt.id;
    const { Messages = [] } = await this.options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: Math.min(10, count),
        WaitTimeSeconds: wait,
        MessageSystemAttributeNames: ['All'],
        ...(attempt ? { ReceiveRequestAttemptId: attempt.attemptId } : {}),
      }),
    );
    if (attempt)
      this.attempts?.received(
        attempt.id,
        attempt.attemptId,
        Messages.map((m) => m.ReceiptHandle ?? ''),
      );
    return Messages;
  }
}

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
  const batchSize = options.batchSize ?? 10;
  const receive = (count: number, wait: number) =>
    options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: Math.min(10, count),
        WaitTimeSeconds: wait,
        MessageSystemAttributeNames: ['All'],
      }),
    );
  // Like Lambda: nothing received, no invocation; the batching window starts with the first message and
  // the function is invoked when the batch is full or the window is over, whatever still trickles in.
  const messages: Message[] = [...((await receive(batchSize, options.waitSeconds ?? 0)).Messages ?? [])];
  const deadline = Date.now() + (options.batchingWindowMs ?? 0);
  while (messages.length > 0 && messages.length < batchSize && Date.now() < deadline) {
    const { Messages } = await receive(batchSize - messages.length, 0);
    if (Messages && Messages.length > 0) messages.push(...Messages);
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (messages.length === 0) return { received: 0, failed: 0, crashed: false };

  const queueArn =
    options.queueArn ?? `arn:aws:sqs:us-east-1:000000000000:${options.queueUrl.split('/').pop()}`;
  const held = options.held?.hold(
    options.queueUrl,
    messages.map((m) => m.ReceiptHandle ?? ''),
  );
  try {
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
    if (held !== undefined) options.held?.release(held);
  }
}

/**
 * The emulator's launcher replaces moto's SQS delete and retention check with cheaper equivalents
 * (local/moto_launcher.py: both scanned the whole queue per message, O(n^2) to drain a backlog). What the
 * pollers rely on must stay as moto answered it: a delete removes that message and no other, deleting it
 * again is accepted, an unknown receipt handle is refused, and messages within their retention period are
 * received.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiptHandleIsInvalid,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients, uniqueName } from '../support/aws.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

async function queueWith(bodies: readonly string[]): Promise<string> {
  const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('deletes') }));
  if (!QueueUrl) throw new Error('no queue url');
  await clients.sqs.send(
    new SendMessageBatchCommand({
      QueueUrl,
      Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
    }),
  );
  return QueueUrl;
}

const receive = async (QueueUrl: string, visibility = 600) =>
  (
    await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: visibility }),
    )
  ).Messages ?? [];

const counts = async (QueueUrl: string) => {
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
};

describe('SQS deletes and receives on the emulator (the launcher keeps moto semantics)', () => {
  it('receives messages within their retention period, and a delete removes only its own message', async () => {
    const url = await queueWith(['a', 'b', 'c']);
    const [first, ...rest] = await receive(url);
    expect(rest.length + 1).toBe(3);
    await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle }));
    expect(await counts(url)).toEqual({ visible: 0, inFlight: 2 });
  });

  it('accepts deleting a message twice, and a batch delete of several', async () => {
    const url = await queueWith(['a', 'b', 'c', 'd']);
    const messages = await receive(url);
    const entries = messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
    const once = await clients.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    expect(once.Successful).toHaveLength(4);
    const twice = await clients.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    expect(twice.Failed ?? []).toEqual([]);
    expect(await counts(url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('deletes a message received again by its latest receipt handle', async () => {
    const url = await queueWith(['a']);
    await receive(url, 0);
    const [again] = await receive(url);
    await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: again?.ReceiptHandle }));
    expect(await counts(url)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('refuses an unknown receipt handle and deletes nothing', async () => {
    const url = await queueWith(['a', 'b']);
    await expect(
      clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: 'not-a-handle' })),
    ).rejects.toBeInstanceOf(ReceiptHandleIsInvalid);
    const batch = await clients.sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'x', ReceiptHandle: 'not-a-handle' }] }),
    );
    expect(batch.Failed?.[0]?.Code).toBe('ReceiptHandleIsInvalid');
    expect(await counts(url)).toEqual({ visible: 2, inFlight: 0 });
  });
});

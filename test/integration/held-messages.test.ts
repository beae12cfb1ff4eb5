/**
 * Local mode's give-back of what a killed run held, against the emulator: the messages of a FIFO receive
 * SQS answered after the run died (in flight for the queue's visibility timeout, their group blocked) come
 * back at once in the next run.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { HeldMessages } from '../../local/held-messages.ts';
import { testClients, uniqueName } from '../support/aws.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

it('gives back a FIFO message whose receive a killed run never saw answered, by its attempt id', async () => {
  const { QueueUrl } = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: `${uniqueName('held')}.fifo`,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '900' },
    }),
  );
  const queueUrl = QueueUrl ?? '';
  await clients.sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: '{"table":"orders"}',
      MessageGroupId: 'orders',
    }),
  );
  const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
  const killed = new HeldMessages(file);
  const { attemptId } = killed.attempt(queueUrl);
  // SQS takes the message in flight for 900 s; the run is killed before it reads the answer.
  await clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      ReceiveRequestAttemptId: attemptId,
    }),
  );
  const receive = async () =>
    (await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 })))
      .Messages ?? [];
  expect(await receive()).toEqual([]);

  expect(await new HeldMessages(file).giveBackLeftovers(clients.sqs)).toBe(1);

  expect((await receive()).map((m) => m.Body)).toEqual(['{"table":"orders"}']);
});

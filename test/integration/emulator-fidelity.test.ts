/**
 * What the protocol relies on AWS to do, asserted against whatever target the suite runs on.
 * Where moto differs from AWS the test says so, and docs/emulator.md's "Emulator fidelity" table repeats it.
 */
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients, uniqueName } from '../support/aws.ts';
import { waitFor } from '../support/wait.ts';

const clients = testClients();
const doc = DynamoDBDocumentClient.from(clients.dynamodb);
afterAll(() => destroyClients(clients));

async function createQueue(
  name: string,
  attributes: Record<string, string> = {},
): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await clients.sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (!QueueUrl) throw new Error('no queue url');
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
}

async function receive(
  url: string,
  opts: { visibility?: number; max?: number; wait?: number; attempt?: string } = {},
): Promise<Message[]> {
  const { Messages } = await clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: opts.max ?? 10,
      WaitTimeSeconds: opts.wait ?? 1,
      VisibilityTimeout: opts.visibility,
      ReceiveRequestAttemptId: opts.attempt,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }),
  );
  return Messages ?? [];
}

async function createLedgerTable(): Promise<string> {
  const TableName = uniqueName('fidelity');
  await clients.dynamodb.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  return TableName;
}

describe('emulator fidelity', () => {
  it('1. S3 -> SQS notification delivers an AWS-shaped record with a form-URL-encoded key', async () => {
    const bucket = uniqueName('fid-landing');
    const queue = await createQueue(uniqueName('fid-events'));
    await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: [{ QueueArn: queue.arn, Events: ['s3:ObjectCreated:*'] }],
        },
      }),
    );
    const key = 'orders/day=1/a b+c%d;é:x.json';
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{}' }));

    const bodies = (await receive(queue.url, { wait: 2 })).map((m) => JSON.parse(m.Body ?? '{}'));
    const records = bodies.flatMap((b) => b.Records ?? []);
    // Saving the configuration sends an s3:TestEvent first (AWS and moto alike); the batcher ignores it.
    expect(bodies.filter((b) => b.Event === 's3:TestEvent')).toHaveLength(1);
    expect(records).toHaveLength(1);
    const record = records[0];
    expect(record.eventSource).toBe('aws:s3');
    expect(record.eventVersion).toMatch(/^2\./);
    expect(record.eventName).toMatch(/^ObjectCreated:/);
    expect(record.s3.bucket.name).toBe(bucket);
    expect(record.s3.object.size).toBe(2);
    const encoded: string = record.s3.object.key;
    // Space -> '+', '+' -> %2B, '%' -> %25, unicode -> UTF-8 percent escapes. AWS leaves '/' (and '=' ':' ';'
    // in practice) as is; moto uses Python's quote_plus, which escapes them too. Decoding handles both.
    expect(encoded).toContain('a+b%2Bc%25d');
    expect(encoded).toContain('%C3%A9');
    expect(encoded.startsWith('orders/') || encoded.startsWith('orders%2F')).toBe(true);
    expect(decodeURIComponent(encoded.replace(/\+/g, ' '))).toBe(key);
  });

  it('2. PutItem with attribute_not_exists(pk) fails the second time and ALL_OLD returns the owner', async () => {
    const TableName = await createLedgerTable();
    const put = (batchId: string) =>
      doc.send(
        new PutCommand({
          TableName,
          Item: { pk: 'FILE#t#k', sk: 'FILE', batchId },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    await put('B1');
    const error = await put('B2').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    // lib-dynamodb leaves the returned item marshalled.
    expect((error as ConditionalCheckFailedException).Item).toEqual({
      pk: { S: 'FILE#t#k' },
      sk: { S: 'FILE' },
      batchId: { S: 'B1' },
    });
  });

  it('3. TransactWriteItems is all-or-nothing and names the failed condition', async () => {
    const TableName = await createLedgerTable();
    await doc.send(new PutCommand({ TableName, Item: { pk: 'A', sk: 'A', v: 1 } }));
    const error = await doc
      .send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName,
                Item: { pk: 'B', sk: 'B', v: 1 },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Update: {
                TableName,
                Key: { pk: 'A', sk: 'A' },
                UpdateExpression: 'SET v = :two',
                ConditionExpression: 'v = :five',
                ExpressionAttributeValues: { ':two': 2, ':five': 5 },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
    expect(reasons.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed']);
    const b = await doc.send(new GetCommand({ TableName, Key: { pk: 'B', sk: 'B' } }));
    expect(b.Item).toBeUndefined();
  });

  it('4. an unacknowledged SQS message comes back after its visibility timeout, then moves to the DLQ', async () => {
    const dlq = await createQueue(uniqueName('fid-dlq'));
    const queue = await createQueue(uniqueName('fid-q'), {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 2 }),
    });
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'poison' }));

    const first = await receive(queue.url, { visibility: 1 });
    expect(first.map((m) => m.Attributes?.ApproximateReceiveCount)).toEqual(['1']);
    expect(await receive(queue.url, { visibility: 1, wait: 0 })).toHaveLength(0);
    const second = await waitFor(
      'the message back after its 1 s visibility timeout',
      () => receive(queue.url, { visibility: 1 }),
      (messages) => messages.length > 0,
      { everyMs: 0 },
    );
    expect(second.map((m) => m.Attributes?.ApproximateReceiveCount)).toEqual(['2']);
    // maxReceiveCount reached: once visible again, a receive moves it to the DLQ instead of returning it.
    const after = await waitFor(
      'the message in the DLQ after its second visibility timeout',
      async () => ({
        main: await receive(queue.url, { visibility: 1 }),
        dead: await receive(dlq.url, { wait: 0 }),
      }),
      ({ main, dead }) => main.length > 0 || dead.length > 0,
      { everyMs: 0 },
    );
    expect(after.main).toHaveLength(0);
    expect(after.dead.map((m) => m.Body)).toEqual(['poison']);
  });

  it('5. FIFO delivers one group in order and drops duplicates by content and by explicit id', async () => {
    const fifo = await createQueue(`${uniqueName('fid-commit')}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
    const send = (body: string, dedup?: string) =>
      clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: fifo.url,
          MessageBody: body,
          MessageGroupId: 'orders',
          MessageDeduplicationId: dedup,
        }),
      );
    await send('b1', 'B1');
    await send('b2');
    await send('b1-again', 'B1'); // same explicit id: dropped
    await send('b2'); // same content: dropped
    await send('b3');
    const bodies: string[] = [];
    for (let i = 0; i < 5 && bodies.length < 3; i++) {
      const batch = await receive(fifo.url, { max: 10 });
      for (const m of batch) {
        bodies.push(m.Body ?? '');
        await clients.sqs.send(
          new DeleteMessageCommand({ QueueUrl: fifo.url, ReceiptHandle: m.ReceiptHandle }),
        );
      }
    }
    expect(bodies).toEqual(['b1', 'b2', 'b3']);
  });

  it('6. PutObject with IfNoneMatch "*" returns 412 when the key exists (sequential)', async () => {
    const bucket = uniqueName('fid-manifests');
    await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const put = (body: string) =>
      clients.s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 't/_manifests/1.json', Body: body, IfNoneMatch: '*' }),
      );
    await put('first');
    const error = await put('second').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3ServiceException);
    expect((error as S3ServiceException).$metadata.httpStatusCode).toBe(412);
  });

  // Conditional writes are atomic in AWS: of writers racing on one item or key, exactly one wins. moto checks,
  // then writes, in request threads without a lock; local/moto_launcher.py serializes them.
  const ROUNDS = 20;
  const RACERS = 8;

  it('7. of conditional PutItems racing on one item, exactly one succeeds', async () => {
    const TableName = await createLedgerTable();
    for (let round = 0; round < ROUNDS; round++) {
      const outcomes = await Promise.allSettled(
        Array.from({ length: RACERS }, (_, i) =>
          doc.send(
            new PutCommand({
              TableName,
              Item: { pk: `FILE#race#${round}`, sk: 'FILE', batchId: `B${i}` },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        ),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect(won, `round ${round}`).toHaveLength(1);
      for (const error of lost) expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    }
  });

  it('8. of conditional UpdateItems racing on one counter, exactly one succeeds per value', async () => {
    const TableName = await createLedgerTable();
    await doc.send(new PutCommand({ TableName, Item: { pk: 'TABLE#race', sk: 'TABLE', head: 0 } }));
    for (let head = 0; head < ROUNDS; head++) {
      const outcomes = await Promise.allSettled(
        Array.from({ length: RACERS }, () =>
          doc.send(
            new UpdateCommand({
              TableName,
              Key: { pk: 'TABLE#race', sk: 'TABLE' },
              UpdateExpression: 'SET head = :next',
              ConditionExpression: 'head = :head',
              ExpressionAttributeValues: { ':head': head, ':next': head + 1 },
            }),
          ),
        ),
      );
      expect(
        outcomes.filter((o) => o.status === 'fulfilled'),
        `head ${head}`,
      ).toHaveLength(1);
    }
    const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: 'TABLE#race', sk: 'TABLE' } }));
    expect(Item?.head).toBe(ROUNDS);
  });

  it('9. of PutObjects with IfNoneMatch "*" racing on one key, exactly one succeeds', async () => {
    const bucket = uniqueName('fid-race');
    await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    for (let round = 0; round < ROUNDS; round++) {
      const Key = `t/_delta_log/${String(round).padStart(20, '0')}.json`;
      const outcomes = await Promise.allSettled(
        Array.from({ length: RACERS }, (_, i) =>
          clients.s3.send(
            new PutObjectCommand({ Bucket: bucket, Key, Body: `writer ${i}`, IfNoneMatch: '*' }),
          ),
        ),
      );
      expect(
        outcomes.filter((o) => o.status === 'fulfilled'),
        `round ${round}`,
      ).toHaveLength(1);
      for (const o of outcomes) {
        // AWS answers a loser 412, or 409 ConditionalRequestConflict while the winner is in flight.
        if (o.status === 'rejected') expect([409, 412]).toContain(o.reason.$metadata?.httpStatusCode);
      }
    }
  });

  it('11. a FIFO ReceiveMessage retried with its ReceiveRequestAttemptId returns the same messages and receipt handles', async () => {
    const fifo = await createQueue(`${uniqueName('fid-attempt')}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
    for (const body of ['a', 'b'])
      await clients.sqs.send(
        new SendMessageCommand({ QueueUrl: fifo.url, MessageBody: body, MessageGroupId: 'g' }),
      );

    const first = await receive(fifo.url, { visibility: 600, attempt: 'attempt-1' });
    expect(first.map((m) => m.Body)).toEqual(['a', 'b']);
    // The group is in flight: a receive of its own gets nothing for 600 s.
    expect(await receive(fifo.url, { wait: 0 })).toEqual([]);
    // The caller that never saw the answer (its connection died) asks again with the same attempt id.
    const again = await receive(fifo.url, { visibility: 600, attempt: 'attempt-1', wait: 0 });
    expect(again.map((m) => [m.MessageId, m.ReceiptHandle])).toEqual(
      first.map((m) => [m.MessageId, m.ReceiptHandle]),
    );
    // And another attempt id is another receive: nothing.
    expect(await receive(fifo.url, { attempt: 'attempt-2', wait: 0 })).toEqual([]);
  });
});

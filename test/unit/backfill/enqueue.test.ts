import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { backfillRecord, SqsEnqueuer } from '../../../shared/backfill/aws/sqs-enqueuer.ts';
import { RETRYABLE_ERRORS, taskError } from '../../../shared/backfill/backfill-handler.ts';
import { DynamoDbLedger } from '../../../shared/ingestion/aws/dynamodb-ledger.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { parseMessage } from '../../../shared/ingestion/parse-message.ts';

const SQS_LIMIT = 262_144;
const origin = { table: 'orders', run: 'run-1' };

function file(key: string): ObjectRef {
  return {
    bucket: 'landing',
    key,
    size: 1,
    eTag: 'etag',
    versionId: null,
    sequencer: null,
    eventTime: '2026-11-30T00:00:00.000Z',
  };
}

type Entry = { Id: string; MessageBody: string };
type Answer = (entries: Entry[]) => { Failed?: Array<{ Id: string; Code: string; SenderFault: boolean }> };

/**
 * SendMessageBatch as SQS answers it: a request whose messages together exceed the limit fails whole
 * (BatchRequestTooLong); otherwise `answer` decides which entries fail.
 */
function fakeSqs(answer: Answer = () => ({})) {
  const delivered: string[] = [];
  const requests: Entry[][] = [];
  const client = {
    send: async (command: SendMessageBatchCommand) => {
      const entries = (command.input.Entries ?? []) as Entry[];
      requests.push(entries);
      const total = entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody), 0);
      if (total > SQS_LIMIT || entries.some((e) => Buffer.byteLength(e.MessageBody) > SQS_LIMIT)) {
        throw Object.assign(new Error('Batch requests cannot be longer than 262144 bytes'), {
          name: 'BatchRequestTooLong',
          $metadata: { httpStatusCode: 400 },
        });
      }
      const { Failed = [] } = answer(entries);
      const failed = new Set(Failed.map((f) => f.Id));
      for (const e of entries) if (!failed.has(e.Id)) delivered.push(e.MessageBody);
      return { Successful: [], Failed };
    },
  } as unknown as SQSClient;
  return { client, delivered, requests };
}

const keysOf = (bodies: readonly string[]) =>
  bodies.flatMap((b) => parseMessage(b).objects.map((o) => o.key));

describe('backfill enqueue: message size', () => {
  it('splits records whose long keys would push a message over the SQS size limit', async () => {
    // 300 x '€' is 900 bytes of key, 2,700 characters once percent-encoded: 100 records are ~300 KB.
    const files = Array.from({ length: 250 }, (_, i) => file(`orders/${'€'.repeat(300)}-${i}.json`));
    expect(
      Buffer.byteLength(
        JSON.stringify({ Records: files.slice(0, 100).map((f) => backfillRecord(f, origin)) }),
      ),
    ).toBeGreaterThan(SQS_LIMIT);
    const sqs = fakeSqs();
    await new SqsEnqueuer({
      client: sqs.client,
      queueUrl: 'q',
      recordsPerMessage: 100,
      retryBaseMs: 1,
    }).enqueue(files, origin);
    expect(keysOf(sqs.delivered).sort()).toEqual(files.map((f) => f.key).sort());
    for (const request of sqs.requests) {
      expect(request.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody), 0)).toBeLessThanOrEqual(
        SQS_LIMIT,
      );
    }
  });

  it('splits a message SQS refuses as too long (a queue with a smaller MaximumMessageSize), not retrying it as is', async () => {
    const queueLimit = 4_000;
    const sqs = fakeSqs((entries) => ({
      Failed: entries
        .filter((e) => Buffer.byteLength(e.MessageBody) > queueLimit)
        .map((e) => ({ Id: e.Id, Code: 'InvalidParameterValue', SenderFault: true })),
    }));
    const files = Array.from({ length: 30 }, (_, i) => file(`orders/${'x'.repeat(400)}-${i}.json`));
    await new SqsEnqueuer({
      client: sqs.client,
      queueUrl: 'q',
      recordsPerMessage: 10,
      retryBaseMs: 1,
    }).enqueue(files, origin);
    expect(keysOf(sqs.delivered).sort()).toEqual(files.map((f) => f.key).sort());
    expect(sqs.delivered.every((b) => Buffer.byteLength(b) <= queueLimit)).toBe(true);
  });
});

describe('backfill enqueue and ledger read: throttling is retried by the state machine', () => {
  it('SendMessageBatch entries that keep failing surface as Inlet.Throttled', async () => {
    const sqs = fakeSqs((entries) => ({
      Failed: entries.map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
    }));
    const error = await new SqsEnqueuer({
      client: sqs.client,
      queueUrl: 'q',
      recordsPerMessage: 10,
      retryBaseMs: 1,
    })
      .enqueue([file('orders/a.json')], origin)
      .catch((e: unknown) => e);
    expect(taskError(error).name).toBe(RETRYABLE_ERRORS.throttled);
  });

  it('entries that failed once are sent again and delivered once', async () => {
    let calls = 0;
    const sqs = fakeSqs((entries) => {
      calls += 1;
      return calls === 1
        ? { Failed: [{ Id: entries[0]?.Id ?? '0', Code: 'InternalError', SenderFault: false }] }
        : {};
    });
    const files = Array.from({ length: 25 }, (_, i) => file(`orders/${i}.json`));
    await new SqsEnqueuer({
      client: sqs.client,
      queueUrl: 'q',
      recordsPerMessage: 1,
      retryBaseMs: 1,
    }).enqueue(files, origin);
    expect(keysOf(sqs.delivered).sort()).toEqual(files.map((f) => f.key).sort());
  });

  it('BatchGetItem keys left unprocessed after every retry surface as Inlet.Throttled', async () => {
    const client = new DynamoDBClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    // DynamoDB throttled every key: each BatchGetItem answers 200 with all keys in UnprocessedKeys.
    client.middlewareStack.add(
      (_next) => async (args) => {
        const keys =
          (args.input as { RequestItems: Record<string, { Keys: unknown[] }> }).RequestItems.ledger?.Keys ??
          [];
        return {
          response: { statusCode: 200, headers: {}, body: undefined },
          output: { $metadata: {}, Responses: { ledger: [] }, UnprocessedKeys: { ledger: { Keys: keys } } },
        } as never;
      },
      { step: 'build', name: 'throttleEveryKey', priority: 'high' },
    );
    const ledger = new DynamoDbLedger({ client, tableName: 'ledger' });
    const error = await ledger
      .knownIdentities('orders', ['landing#-#orders/a.json'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(taskError(error).name).toBe(RETRYABLE_ERRORS.throttled);
  }, 30_000);
});

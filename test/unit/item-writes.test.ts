// The bench's stand-in for DynamoDB's per-item write order on an emulator that has none: writes to one
// item wait for each other, writes to different items still overlap.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serializeItemWrites } from '../../bench/peers/item-writes.ts';

describe('serializeItemWrites', () => {
  let server: Server;
  let client: DynamoDBClient;
  let events: string[] = [];
  /** Requests the server holds until `hold` of them are in, or 500 ms passed: overlap shows as `in` before `out`. */
  let waiting: (() => void)[] = [];
  const hold = 2;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Item?: { id: { S: string } } };
        const name = body.Item?.id.S ?? 'transaction';
        events.push(`in ${name}`);
        const answer = () => {
          events.push(`out ${name}`);
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
          res.end('{}');
        };
        waiting.push(answer);
        if (waiting.length >= hold) for (const next of waiting.splice(0)) next();
        else
          setTimeout(
            () => waiting.includes(answer) && waiting.splice(waiting.indexOf(answer), 1) && answer(),
            500,
          );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    serializeItemWrites(client, { t: ['id'] });
  });

  afterAll(async () => {
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    events = [];
    waiting = [];
  });

  const put = (id: string) =>
    client.send(
      new PutItemCommand({
        TableName: 't',
        Item: { id: { S: id } },
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );

  it('sends a write to an item only once the previous write to it was answered', async () => {
    await Promise.all([put('a'), put('a')]);
    expect(events).toEqual(['in a', 'out a', 'in a', 'out a']);
  });

  it('lets writes to different items overlap', async () => {
    await Promise.all([put('a'), put('b')]);
    expect(events.slice(0, 2).sort()).toEqual(['in a', 'in b']);
  });

  it('orders a transaction and the writes to the items it touches as they were sent', async () => {
    const transaction = client.send(
      new TransactWriteItemsCommand({
        TransactItems: [{ Put: { TableName: 't', Item: { id: { S: 'a' } } } }],
      }),
    );
    await Promise.all([put('a'), transaction]);
    expect(events).toEqual(['in transaction', 'out transaction', 'in a', 'out a']);
  });
});

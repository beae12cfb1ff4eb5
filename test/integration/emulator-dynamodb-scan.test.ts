/**
 * The emulator's launcher starts a DynamoDB Scan page at a binary search for ExclusiveStartKey instead of
 * re-sorting and walking the whole table per page (local/moto_dynamodb_scan.py). What a paginated Scan
 * relies on must hold: every item exactly once across the pages, Limit counting the items read, a filter
 * applied after the read; and a Query still returns its partition in sort-key order.
 */
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  QueryCommand,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { launcherCheck } from './emulator-python-check.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

/** A table of `pk` (string) and `sk` (number): 3 partitions of 10 items, every other one flagged. */
async function filledTable(): Promise<string> {
  const table = uniqueName('scan');
  await clients.dynamodb.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  const items = ['a', 'é', '\u{1F600}'].flatMap((pk) =>
    [-1, 0, 1.5, 2, 10, 100, 3, 30, 4, 40].map((sk, i) => ({
      pk: { S: pk },
      sk: { N: String(sk) },
      ...(i % 2 === 0 ? { flag: { BOOL: true } } : {}),
    })),
  );
  for (let i = 0; i < items.length; i += 25)
    await clients.dynamodb.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  return table;
}

const id = (item: Record<string, AttributeValue>) => `${item.pk?.S}#${item.sk?.N}`;

async function scanAll(input: ScanCommandInput) {
  const pages: { ids: string[]; scanned: number }[] = [];
  let start = input.ExclusiveStartKey;
  do {
    const page = await clients.dynamodb.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    pages.push({ ids: (page.Items ?? []).map(id), scanned: page.ScannedCount ?? -1 });
    expect(page.Count).toBe(page.Items?.length);
    start = page.LastEvaluatedKey;
  } while (start);
  return pages;
}

describe('DynamoDB Scan pages on the emulator (the launcher keeps their semantics)', () => {
  it('returns every item exactly once across pages of Limit items, with and without a filter', async () => {
    const table = await filledTable();

    const pages = await scanAll({ TableName: table, Limit: 4 });
    const filtered = await scanAll({
      TableName: table,
      Limit: 4,
      FilterExpression: 'attribute_exists(flag)',
    });

    const all = pages.flatMap((p) => p.ids);
    expect(all).toHaveLength(30);
    expect(new Set(all).size).toBe(30);
    for (const page of pages) expect(page.ids.length).toBeLessThanOrEqual(4);
    // Limit counts the items read, before the filter (DynamoDB developer guide, "Limiting the number of
    // items in the result set"): 30 read, 15 returned.
    expect(filtered.reduce((n, p) => n + p.scanned, 0)).toBe(30);
    expect(filtered.flatMap((p) => p.ids).sort()).toEqual(all.filter(flagged).sort());
  });

  it('continues after deletes made between pages, never repeating an item', async () => {
    const table = await filledTable();
    const first = await clients.dynamodb.send(new ScanCommand({ TableName: table, Limit: 5 }));
    const seen = (first.Items ?? []).map(id);

    for (const pk of ['a', 'é', '\u{1F600}'])
      await clients.dynamodb.send(
        new DeleteItemCommand({ TableName: table, Key: { pk: { S: pk }, sk: { N: '40' } } }),
      );
    const rest = await scanAll({ TableName: table, Limit: 5, ExclusiveStartKey: first.LastEvaluatedKey });

    const later = rest.flatMap((p) => p.ids);
    expect(later.filter((x) => seen.includes(x))).toEqual([]);
    expect(later.filter((x) => x.endsWith('#40'))).toEqual([]);
    expect(new Set([...seen, ...later]).size).toBe(seen.length + later.length);
    expect(seen.length + later.length).toBe(30 - 3 + seen.filter((x) => x.endsWith('#40')).length);
  });

  it('queries a partition in sort-key order, numbers as numbers', async () => {
    const table = await filledTable();

    const page = await clients.dynamodb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'é' } },
      }),
    );

    expect(page.Items?.map((item) => Number(item.sk?.N))).toEqual([-1, 0, 1.5, 2, 3, 4, 10, 30, 40, 100]);
  });

  it.skipIf(testTarget().kind !== 'emulator')(
    "answers as moto's own Scan, page for page, on random tables",
    async () => {
      expect(await launcherCheck('emulator_dynamodb_scan.py', 25)).toMatch(/^0 difference\(s\)$/);
    },
    120_000,
  );
});

/** Items 0, 2, 4... of each partition's list in filledTable are flagged: -1, 1.5, 10, 3, 4. */
const flagged = (x: string) => ['-1', '1.5', '10', '3', '4'].includes(x.split('#')[1] ?? '');

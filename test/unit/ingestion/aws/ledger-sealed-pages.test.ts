// Group commit asks the `sealed` index for a table's waiting batches on every commit. The index also holds
// COMMITTED batches whose BatchCommitted is not published yet; an EventBridge outage piles them up. The
// Query must cost a bounded number of pages then, not the whole pile on every commit (F22 of the second
// AWS review: the comment promised it, the loop read until it found `limit` SEALED batches).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbLedger, MAX_SEALED_QUERY_PAGES } from '../../../../shared/ingestion/aws/dynamodb-ledger.ts';

/** A client whose Query pages hold `committed` unpublished batches, then one SEALED one. */
function indexOf(committed: number, pageSize: number) {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const items = [
    ...Array.from({ length: committed }, (_, i) => ({
      table: 't',
      batchId: `C${i}`,
      state: 'COMMITTED',
      sealedAt: i,
    })),
    { table: 't', batchId: 'S', state: 'SEALED', sealedAt: committed },
  ];
  const queries: unknown[] = [];
  client.middlewareStack.add(
    (_next) => async (args) => {
      const input = args.input as { ExclusiveStartKey?: { n: { N: string } } };
      queries.push(input);
      const start = Number(input.ExclusiveStartKey?.n.N ?? 0);
      const page = items.slice(start, start + pageSize);
      const more = start + pageSize < items.length;
      return {
        response: { statusCode: 200, headers: {}, body: undefined },
        output: {
          $metadata: {},
          Items: page,

          ...(more ? { LastEvaluatedKey: { n: start + pageSize } } : {}),
        },
      } as never;
    },
    { step: 'build', name: 'sealedIndex', priority: 'high' },
  );
  return { ledger: new DynamoDbLedger({ client, tableName: 'ledger' }), queries };
}

describe('listSealedForCommit', () => {
  it('finds the SEALED batches among a few pages of COMMITTED ones', async () => {
    const { ledger } = indexOf(60, 50);
    expect((await ledger.listSealedForCommit('t', 5)).map((b) => b.batchId)).toEqual(['S']);
  });

  it('reads a bounded number of pages however many COMMITTED batches wait to be published', async () => {
    const { ledger, queries } = indexOf(20_000, 50);
    expect(await ledger.listSealedForCommit('t', 5)).toEqual([]);
    expect(queries.length).toBe(MAX_SEALED_QUERY_PAGES);
  });
});

import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLedger } from '../../shared/ingestion/aws/dynamodb-ledger.ts';
import { MAX_BODY_BYTES, quarantineRecords } from '../../shared/ingestion/quarantine.ts';
import { testClients } from '../support/aws.ts';
import { createPipelineResources } from '../support/resources.ts';

const clients = testClients();
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The quarantine item's adapter against the emulator's DynamoDB (which enforces the 400 KB item size). */
describe('quarantine on the emulator', () => {
  let ledger: DynamoDbLedger;
  let table: string;

  beforeAll(async () => {
    table = (await createPipelineResources(clients, { notifications: false })).ledgerTable;
    ledger = new DynamoDbLedger({ client: clients.dynamodb, tableName: table });
  });

  it('stores a 500,000-byte multibyte body cut to the byte cap and lists it with its reason', async () => {
    const body = `${'ü'.repeat(249_999)}ab`; // 2-byte characters: 500,000 bytes
    const sentAt = new Date().toISOString();
    const ok = await quarantineRecords(ledger, silent, { messageId: 'big-1', body, sentAt }, [
      { index: -1, reason: 'message body is not JSON', record: body },
    ]);
    expect(ok).toBe(true);
    const listed = await ledger.listQuarantine([sentAt.slice(0, 10)]);
    const entry = listed.find((e) => e.id === 'big-1');
    expect(entry).toMatchObject({
      reason: 'message body is not JSON',
      bodyTruncated: true,
      bodyBytes: 500_000,
    });
    expect(Buffer.byteLength(entry?.body ?? '')).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(body.startsWith(entry?.body ?? 'x')).toBe(true);
  });

  it("lists a day's entries from every shard, and entries a ledger wrote before the sharding", async () => {
    const sentAt = '2026-01-02T03:04:05.000Z';
    const ids = Array.from({ length: 40 }, (_, i) => `m-${i}`);
    for (const id of ids) {
      expect(
        await quarantineRecords(ledger, silent, { messageId: id, body: 'x', sentAt }, [
          { index: -1, reason: 'message body is not JSON', record: 'x' },
        ]),
      ).toBe(true);
    }
    // The item layout before the sharding: one partition per day.
    await DynamoDBDocumentClient.from(clients.dynamodb).send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: 'QUARANTINE#2026-01-02',
          sk: 'old-1',
          id: 'old-1',
          reason: 'old',
          sentAt,
          source: 'ingest-queue',
          body: 'y',
        },
      }),
    );
    const listed = await ledger.listQuarantine(['2026-01-02']);
    expect(listed.map((e) => e.id).sort()).toEqual([...ids, 'old-1'].sort());
  });
});

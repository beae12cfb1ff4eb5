import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeBackfillDefinition } from '../../bench/backfill-definition.ts';
import { queueDepth } from '../../local/aws/queue-depth.ts';
import { runStandalone } from '../../local/step-functions/standalone.ts';
import { S3InventoryReader } from '../../shared/backfill/aws/s3-inventory-reader.ts';
import { S3ObjectLister } from '../../shared/backfill/aws/s3-lister.ts';
import { SqsEnqueuer } from '../../shared/backfill/aws/sqs-enqueuer.ts';
import { makeBackfillHandler } from '../../shared/backfill/backfill-handler.ts';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import { DynamoDbLedger } from '../../shared/ingestion/aws/dynamodb-ledger.ts';
import { parseMessage } from '../../shared/ingestion/parse-message.ts';
import { MemoryMetrics } from '../../shared/kernel/metrics.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { functionClients } from '../support/iam.ts';
import { ALL_VERSIONS_SCHEMA, writeInventoryReport } from '../support/inventory.ts';
import { createPipelineResources, type PipelineResources } from '../support/resources.ts';

const clients = testClients();
const target = testTarget();

/**
 * Every record on the queue, drained: the keys the backfill enqueued, with how often. Called once the run
 * is over, so nothing more arrives: drained when the queue holds nothing, waiting or in flight. An empty
 * receive alone proves nothing (a short poll samples some of SQS's servers), and waiting out long polls
 * until two come back empty cost two seconds a run.
 */
async function drainKeys(queueUrl: string): Promise<Map<string, number>> {
  const keys = new Map<string, number>();
  for (;;) {
    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (Messages.length === 0) {
      const { visible, inFlight } = await queueDepth(clients.sqs, queueUrl);
      if (visible === 0 && inFlight === 0) return keys;
      continue;
    }
    for (const m of Messages) {
      for (const object of parseMessage(m.Body ?? '').objects)
        keys.set(object.key, (keys.get(object.key) ?? 0) + 1);
    }
    await clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
}

/** The fixture's report: all versions, so older versions and delete markers are in it too. */
const writeInventory = (destination: string, sourceBucket: string, rows: string[][], files: number) =>
  writeInventoryReport(clients.s3, {
    destination,
    sourceBucket,
    prefix: 'inv/landing/all',
    columns: ALL_VERSIONS_SCHEMA,
    rows,
    files,
  });

describe.skipIf(target.kind !== 'emulator')(
  'backfill from an S3 Inventory report (state machine, emulator)',
  () => {
    let resources: PipelineResources;
    let definition: object;
    beforeAll(async () => {
      resources = await createPipelineResources(clients, { notifications: false });
      definition = synthesizeBackfillDefinition();
    }, 120_000);

    it('enqueues each current object of the table once, skipping older versions, delete markers, other buckets and prefixes', async () => {
      const bucket = resources.landingBucket;
      const current = Array.from({ length: 45 }, (_, i) => `orders/2026/${i % 5}/f ${i}+ü.json`);
      const encode = (k: string) => encodeURIComponent(k).replace(/%20/g, '+').replace(/%2F/g, '/');
      const row = (b: string, key: string, latest: boolean, marker: boolean) => [
        b,
        encode(key),
        `v-${key.length}`,
        String(latest),
        String(marker),
        '10',
        '2026-11-29T10:00:00.000Z',
        'etag',
      ];
      const rows = [
        ...current.map((k) => row(bucket, k, true, false)),
        row(bucket, 'orders/old.json', false, false),
        row(bucket, 'orders/deleted.json', true, true),
        row(bucket, 'clicks/x.json', true, false),
        row('another-bucket', 'orders/elsewhere.json', true, false),
      ];
      const destination = uniqueName('inventory');
      await clients.s3.send(new CreateBucketCommand({ Bucket: destination }));
      const manifest = await writeInventory(destination, bucket, rows, 3);
      // The backfill function reads the report as its role: a stack whose inventoryBuckets names it.
      const roles = await functionClients({
        label: 'backfill-inventory',
        context: {
          'inlet:tables': [{ name: 'orders', prefix: 'orders/' }],
          'inlet:backfillInventoryBuckets': [destination],
        },
        resources,
        target: testTarget,
      });
      const fn = roles?.of('Backfill') ?? clients;

      const chain = await runStandalone({
        definition,
        handler: makeBackfillHandler({
          config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/' }] }),
          landingBucket: bucket,
          lister: new S3ObjectLister(fn.s3),
          inventory: new S3InventoryReader(fn.s3),
          ledger: new DynamoDbLedger({ client: fn.dynamodb, tableName: resources.ledgerTable }),
          enqueuer: new SqsEnqueuer({
            client: fn.sqs,
            queueUrl: resources.ingestQueue.url,
            recordsPerMessage: 10,
          }),
          log: { debug() {}, info() {}, warn() {}, error() {} },
          metrics: new MemoryMetrics(),
          now: Date.now,
          limits: { pagesPerStep: 2, pageSize: 5, stepBudgetMs: 60_000, stepsPerExecution: 3 },
        }),
        input: { table: 'orders', inventory: manifest, concurrency: 3 },
        name: uniqueName('inv'),
      });
      const last = chain.at(-1);
      expect(last?.status).toBe('SUCCEEDED');
      expect(last?.output as BackfillSummary).toMatchObject({
        partitions: 3,
        listed: current.length,
        enqueued: current.length,
        complete: true,
      });
      // 17 rows per file, 10 per step, one step per partition per execution: the row cursors carried over.
      expect(chain.length).toBeGreaterThan(1);
      const enqueued = await drainKeys(resources.ingestQueue.url);
      expect([...enqueued.keys()].sort()).toEqual([...current].sort());
      expect([...enqueued.values()].every((n) => n === 1)).toBe(true);
    }, 180_000);
  },
);

// The backfill's rate through the state machine (Map of partitions) as the local executor runs it, one
// partition at a time and in parallel; the same from an S3 Inventory report; and what a reconcile lists.
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { type AwsClients, createClients, destroyClients } from '../local/aws/clients.ts';
import { runStandalone } from '../local/step-functions/standalone.ts';
import { S3InventoryReader } from '../shared/backfill/aws/s3-inventory-reader.ts';
import { S3ObjectLister } from '../shared/backfill/aws/s3-lister.ts';
import { SqsEnqueuer } from '../shared/backfill/aws/sqs-enqueuer.ts';
import type { BackfillDeps } from '../shared/backfill/backfill.ts';
import { makeBackfillHandler } from '../shared/backfill/backfill-handler.ts';
import type { BackfillSummary } from '../shared/backfill/request.ts';
import { parsePipelineConfig } from '../shared/config/pipeline-config.ts';
import { DynamoDbLedger } from '../shared/ingestion/aws/dynamodb-ledger.ts';
import { MemoryMetrics } from '../shared/kernel/metrics.ts';
import { writeInventoryReport } from '../test/support/inventory.ts';
import { uniqueName } from '../test/support/names.ts';
import { synthesizeBackfillDefinition } from './backfill-definition.ts';
import { HISTORY, HISTORY_KEY_TIME, type HistoryFixture } from './incremental.ts';
import { afterHop, type BenchContext, type Benchmark, log, quick } from './support.ts';

export const backfill: Benchmark = {
  name: 'backfill',
  async run(ctx) {
    // The function's own clients (through the AWS-latency proxy in that mode); `observer` only sets up.
    const clients = createClients(ctx.target);
    try {
      return await backfillRuns(ctx, clients);
    } finally {
      destroyClients(clients);
    }
  },
};

async function backfillRuns({ observer, fixtures, hops }: BenchContext, clients: AwsClients) {
  const fixture = fixtures.get(HISTORY) as HistoryFixture | undefined;
  if (!fixture) throw new Error('the backfill benchmark needs the incremental benchmark to run first');
  const queue = await observer.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('bench-backfill') }));
  const deps = (table: Record<string, unknown>): BackfillDeps => ({
    config: parsePipelineConfig({ tables: [{ name: 'hist', prefix: 'hist/', ...table }] }),
    landingBucket: fixture.bucket,
    lister: new S3ObjectLister(clients.s3),
    inventory: new S3InventoryReader(clients.s3),
    ledger: new DynamoDbLedger({ client: clients.dynamodb, tableName: fixture.h.resources.ledgerTable }),
    enqueuer: new SqsEnqueuer({
      client: clients.sqs,
      queueUrl: queue.QueueUrl ?? '',
      recordsPerMessage: 10,
    }),
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 20, stepBudgetMs: 120_000, stepsPerExecution: 1_000 },
  });
  const definition = synthesizeBackfillDefinition();
  /** A whole run, every continuation, through the state machine's definition. */
  const execute = async (input: Record<string, unknown>, table: Record<string, unknown> = {}) => {
    const started = Date.now();
    const last = (
      await runStandalone({
        definition,
        // Each Task state: Step Functions' own hop before the function runs (AWS-latency mode only).
        handler: afterHop(hops?.stepFunctionsTaskMs ?? 0, makeBackfillHandler(deps(table))),
        input,
        name: uniqueName('bench-run'),
      })
    ).at(-1);
    if (last?.status !== 'SUCCEEDED') throw new Error(`backfill run ${last?.status}: ${last?.cause}`);
    return { summary: last.output as BackfillSummary, ms: Date.now() - started };
  };
  const rate = (s: BackfillSummary, ms: number) => Math.round(s.listed / (ms / 1000));
  const check = (s: BackfillSummary) => {
    if (!s.complete || s.listed !== fixture.objects || s.alreadyIngested !== fixture.ingested)
      throw new Error(`backfill totals off: ${JSON.stringify(s)}`);
  };

  log('backfill: one partition at a time (the serial baseline)');
  const serial = await execute({ table: 'hist', concurrency: 1 });
  check(serial.summary);
  // 16 in the full run too: 32 partitions listing the 100,000-object bucket at once pushed moto past the SDK's
  // 30 s timeout (each of its pages costs O(bucket), docs/performance.md), and the run never finished.
  const concurrency = 16;
  log(`backfill: ${concurrency} partitions at a time`);
  const parallel = await execute({ table: 'hist', concurrency });
  check(parallel.summary);

  log('backfill from an S3 Inventory report');
  const inventoryFiles = quick ? 4 : 16;
  const manifest = await writeInventory(observer, fixture.bucket, inventoryFiles);
  const inventory = await execute({ table: 'hist', inventory: manifest, concurrency });
  check(inventory.summary);

  const backfillKeys = {
    objects: fixture.objects,
    partitions: parallel.summary.partitions,
    concurrency,
    objectsPerSecond: rate(parallel.summary, parallel.ms),
    serialObjectsPerSecond: rate(serial.summary, serial.ms),
    inventoryObjectsPerSecond: rate(inventory.summary, inventory.ms),
    // The report's data files (its partitions are ranges of them, at most 2 x concurrency).
    inventoryFiles,
  };
  // The reconcile's figure is what it lists, which no latency changes.
  if (hops) return { backfill: backfillKeys };

  log('reconcile: the whole prefix, then only the window');
  const window = {
    table: 'hist',
    mode: 'reconcile',
    lookbackSeconds: 3_600,
    settleSeconds: 0,
    dryRun: true,
  };
  const whole = await execute({ ...window, concurrency });
  const windowed = await execute({ ...window, concurrency }, { keyTime: { pattern: HISTORY_KEY_TIME } });
  return {
    backfillObjectsPerSecond: rate(parallel.summary, parallel.ms),
    backfill: backfillKeys,
    reconcile: {
      existing: fixture.objects,
      // With the table's keyTime pattern (the key bench/README.md names); the whole prefix's beside it.
      objectsListedPerRun: windowed.summary.listed,
      objectsListedPerRunWithoutKeyTime: whole.summary.listed,
      prefixesListed: windowed.summary.partitions,
      seconds: { before: whole.ms / 1000, after: windowed.ms / 1000 },
    },
  };
}

/** An S3 Inventory report of `bucket` in AWS's CSV format: manifest.json and gzip data files. */
async function writeInventory(
  clients: HistoryFixture['h']['clients'],
  bucket: string,
  files: number,
): Promise<string> {
  const destination = uniqueName('bench-inventory');
  await clients.s3.send(new CreateBucketCommand({ Bucket: destination }));
  const rows: string[][] = [];
  let token: string | undefined;
  do {
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? [])
      rows.push([
        bucket,
        encodeURIComponent(o.Key ?? ''),
        String(o.Size ?? 0),
        o.LastModified?.toISOString() ?? '',
        (o.ETag ?? '').replace(/"/g, ''),
      ]);
    token = page.NextContinuationToken;
  } while (token);
  return writeInventoryReport(clients.s3, {
    destination,
    sourceBucket: bucket,
    prefix: `inventory/${bucket}/all`,
    columns: 'Bucket, Key, Size, LastModifiedDate, ETag',
    rows,
    files,
  });
}

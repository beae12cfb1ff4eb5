// `npm run bench [-- --quick]`: cost, throughput and start-up, measured on the emulator, written to
// bench/results.json (what each number means: README, "Benchmarks"). Requests are counted by SDK middleware on every
// client the handlers use; nothing is estimated except what AWS itself does (S3 sending each event).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { build } from 'esbuild';
import pLimit from 'p-limit';
import { startEmulator } from '../local/emulator.ts';
import { projectRoot } from '../local/paths.ts';
import { pollOnce } from '../local/poller.ts';
import { type AwsClients, createClients, destroyClients } from '../shared/aws/clients.ts';
import { queueDepth } from '../shared/aws/queues.ts';
import { emulatorTarget } from '../shared/aws/target.ts';
import { S3ObjectLister } from '../shared/backfill/s3-lister.ts';
import { SqsEnqueuer } from '../shared/backfill/sqs-enqueuer.ts';
import { parsePipelineConfig } from '../shared/config.ts';
import { DynamoDbLedger } from '../shared/ledger/dynamodb-ledger.ts';
import { MemoryMetrics } from '../shared/metrics.ts';
import { BackfillRun } from '../shared/usecases/backfill.ts';
import { commitsInFlight } from '../shared/usecases/sweep.ts';
import { s3Notification } from '../test/support/events.ts';
import { PipelineHarness } from '../test/support/harness.ts';
import { uniqueName } from '../test/support/names.ts';
import { createPipelineResources } from '../test/support/resources.ts';
import { cliTimings } from './cli.ts';

const quick = process.argv.includes('--quick');
const SIZES = quick
  ? { files: 2_000, existing: 5_000, fresh: 200 }
  : { files: 10_000, existing: 100_000, fresh: 1_000 };

/** AWS list prices, us-east-1, on-demand, as published at the date below (not fetched: this machine is offline). */
const PRICES = {
  date: '2026-11',
  region: 'us-east-1',
  sqsPerMillionRequests: 0.4,
  dynamodbPerMillionWriteUnits: 0.625,
  dynamodbPerMillionReadUnits: 0.125,
  s3PerThousandPuts: 0.005,
  s3PerThousandGets: 0.0004,
  lambdaPerMillionInvocations: 0.2,
  eventBridgePerMillionEvents: 1.0,
  stepFunctionsPerThousandTransitions: 0.025,
  note: 'Lambda GB-seconds and storage are not included; requests and invocations are.',
};

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = (ms: number) => Math.round(ms) / 1000;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Runs `send` over `items` in chunks of `size`, 8 chunks at a time. */
async function inChunks<T>(items: readonly T[], size: number, send: (chunk: T[]) => Promise<unknown>) {
  const limit = pLimit(8);
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  await Promise.all(chunks.map((chunk) => limit(() => send(chunk))));
}

async function sendEvents(clients: AwsClients, queueUrl: string, bucket: string, keys: readonly string[]) {
  await inChunks(keys, 10, (batch) =>
    clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        // One record per message, as S3 sends them.
        Entries: batch.map((key, j) => ({
          Id: String(j),
          MessageBody: s3Notification({ bucket, key, size: 1000, eventTime: new Date().toISOString() }),
        })),
      }),
    ),
  );
}

/**
 * Lambda's SQS mappings, one invocation at a time, until nothing is queued or in flight. Returns the
 * invocations and the time spent inside the handlers (the protocol's own work, without the emulator's queue
 * polling, which costs far more in moto than in SQS).
 */
async function drain(h: PipelineHarness, observer: AwsClients, batchingWindowMs = 1_000) {
  let invocations = 0;
  let handlerMs = 0;
  const timed =
    (handler: (event: SQSEvent) => Promise<SQSBatchResponse>) =>
    async (event: SQSEvent): Promise<SQSBatchResponse> => {
      invocations += 1;
      const started = performance.now();
      try {
        return await handler(event);
      } finally {
        handlerMs += performance.now() - started;
      }
    };
  const batcher = timed(h.batcher());
  const committer = timed(h.committer());
  const ledger = new DynamoDbLedger({ client: observer.dynamodb, tableName: h.resources.ledgerTable });
  const depth = async (url: string) => {
    const { visible, inFlight } = await queueDepth(observer.sqs, url);
    return visible + inFlight;
  };
  for (;;) {
    const ingest = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.ingestQueue.url, batchSize: 1_000, batchingWindowMs },
      batcher,
    );
    const commit = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.commitQueue.url, batchSize: 10 },
      committer,
    );
    if (ingest.received > 0 || commit.received > 0) continue;
    const queued = (await depth(h.resources.ingestQueue.url)) + (await depth(h.resources.commitQueue.url));
    if (queued === 0 && !(await commitsInFlight(ledger, h.config.tables))) return { invocations, handlerMs };
  }
}

/** A pipeline as deployed by default: Lambda batch size 1,000, a 1 s window (the default is 20 s). */
const pipeline = (clients: AwsClients, table: string, countRequests: boolean) =>
  PipelineHarness.create(clients, {
    config: { tables: [{ name: table, prefix: `${table}/` }], leaseSeconds: 300 },
    batchSize: 1_000,
    batchingWindowMs: 1_000,
    visibilityTimeout: 300,
    notifications: false,
    countRequests,
  });

async function costAndLatency(clients: AwsClients, observer: AwsClients) {
  const h = await pipeline(clients, 'events', true);
  const keys = Array.from(
    { length: SIZES.files },
    (_, i) => `events/2026/11/30/part-${String(i).padStart(6, '0')}.json`,
  );
  await sendEvents(observer, h.resources.ingestQueue.url, h.resources.landingBucket, keys);
  h.counter.reset();
  // The deployed batching window (20 s): batches fill to Lambda's 1,000, as they would on AWS.
  const { invocations, handlerMs: protocolMs } = await drain(h, observer, 20_000);
  const manifests = await h.manifests('events');
  const committed = manifests.reduce((n, m) => n + m.fileCount, 0);
  if (committed !== SIZES.files) throw new Error(`committed ${committed} of ${SIZES.files} files`);

  const c = h.counter;
  const n = SIZES.files;
  const perFile = (x: number) => Math.round((x / n) * 10_000) / 10_000;
  // S3 sends each event itself: one SQS request per file on top of what the handlers did.
  const sqs = c.total('sqs.') + n;
  const writeUnits = c.dynamodbWriteItems + c.dynamodbTransactItems; // transactional items bill twice
  const readUnits = c.dynamodbReadItems + (c.requests.get('dynamodb.Query') ?? 0);
  const s3Puts = c.requests.get('s3.PutObject') ?? 0;
  const s3Gets = c.total('s3.') - s3Puts;
  const events = h.published.length;
  const usd =
    (sqs / 1e6) * PRICES.sqsPerMillionRequests +
    (writeUnits / 1e6) * PRICES.dynamodbPerMillionWriteUnits +
    (readUnits / 1e6) * PRICES.dynamodbPerMillionReadUnits +
    (s3Puts / 1e3) * PRICES.s3PerThousandPuts +
    (s3Gets / 1e3) * PRICES.s3PerThousandGets +
    (invocations / 1e6) * PRICES.lambdaPerMillionInvocations +
    (events / 1e6) * PRICES.eventBridgePerMillionEvents;
  return {
    protocolMs,
    cost: {
      files: n,
      requestsPerFile: {
        sqs: perFile(sqs),
        dynamodbWriteUnits: perFile(writeUnits),
        dynamodbReadUnits: perFile(readUnits),
        s3: perFile(c.total('s3.')),
        stepFunctions: 0,
        lambdaInvocations: perFile(invocations),
        eventBridge: perFile(events),
      },
      requests: Object.fromEntries([...c.requests].sort()),
      versions: manifests.length,
      usdPerMillionFiles: Math.round((usd / n) * 1e6 * 100) / 100,
      prices: PRICES,
    },
  };
}

/**
 * Event to manifest, per file, at a steady arrival rate (a backlog drained at once would measure the
 * backlog): 10 files every 100 ms while the batcher and committer run, each invocation after the other.
 */
async function latency(clients: AwsClients, observer: AwsClients) {
  const h = await pipeline(clients, 'lat', false);
  const total = quick ? 300 : 1_500;
  const keys = Array.from({ length: total }, (_, i) => `lat/2026/11/30/f-${i}.json`);
  let sending = true;
  const sender = (async () => {
    for (let i = 0; i < keys.length; i += 10) {
      await sendEvents(
        observer,
        h.resources.ingestQueue.url,
        h.resources.landingBucket,
        keys.slice(i, i + 10),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    sending = false;
  })();
  while (sending) {
    await h.pollIngest();
    await h.pollCommit();
  }
  await sender;
  await drain(h, observer);
  const latencies = (await h.manifests('lat')).flatMap((m) =>
    m.files.map((f) => Date.parse(m.committedAt) - Date.parse(f.eventTime)),
  );
  if (latencies.length !== total) throw new Error(`latency run committed ${latencies.length} of ${total}`);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    files: total,
    batchingWindowMs: 1_000,
  };
}

/** The same number of plain, unconditional puts of the same items at the batcher's concurrency. */
async function rawWrites(clients: AwsClients): Promise<number> {
  // A ledger table exactly like the pipeline's (same keys, same index), written without the protocol.
  const { ledgerTable: table } = await createPipelineResources(clients, { notifications: false });
  const limit = pLimit(64);
  const started = Date.now();
  await Promise.all(
    Array.from({ length: SIZES.files }, (_, i) =>
      limit(() =>
        clients.dynamodb.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              pk: { S: `FILE#events#landing#-#events/2026/11/30/part-${i}.json` },
              sk: { S: 'F' },
              batchId: { S: '01JRAW' },
              size: { N: '1000' },
            },
          }),
        ),
      ),
    ),
  );
  return Date.now() - started;
}

async function putObjects(clients: AwsClients, bucket: string, keys: readonly string[]): Promise<void> {
  const limit = pLimit(16);
  let done = 0;
  await Promise.all(
    keys.map((Key) =>
      limit(async () => {
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }));
        done += 1;
        if (done % 20_000 === 0) log(`  ${done} objects uploaded`);
      }),
    ),
  );
}

/**
 * What a hand-rolled "what did I load last time" job does each run (list everything, diff against a control
 * table, record the new files) against Inlet taking the new files' events, side by side on one bucket.
 * The same bucket then measures the backfill's listing rate.
 */
async function incrementalAndBackfill(clients: AwsClients, observer: AwsClients) {
  const h = await pipeline(clients, 'hist', false);
  const bucket = h.resources.landingBucket;
  const key = (i: number) => `hist/${String(i % 97).padStart(2, '0')}/obj-${String(i).padStart(7, '0')}.json`;
  const existing = Array.from({ length: SIZES.existing }, (_, i) => key(i));
  const fresh = Array.from({ length: SIZES.fresh }, (_, i) => key(SIZES.existing + i));
  log(`uploading ${existing.length + fresh.length} objects`);
  await putObjects(observer, bucket, [...existing, ...fresh]);

  const control = uniqueName('control');
  await observer.dynamodb.send(
    new CreateTableCommand({
      TableName: control,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
    }),
  );
  const writeControl = (keys: readonly string[]) =>
    inChunks(keys, 25, (chunk) =>
      observer.dynamodb.send(
        new BatchWriteItemCommand({
          RequestItems: { [control]: chunk.map((k) => ({ PutRequest: { Item: { key: { S: k } } } })) },
        }),
      ),
    );
  log('loading the naive control table');
  await writeControl(existing);

  log('naive: list, scan, diff, record');
  let started = Date.now();
  const listed: string[] = [];
  let token: string | undefined;
  do {
    const page = await observer.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'hist/', ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) listed.push(o.Key ?? '');
    token = page.NextContinuationToken;
  } while (token);
  const loaded = new Set<string>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await observer.dynamodb.send(
      new ScanCommand({ TableName: control, ExclusiveStartKey: startKey as never }),
    );
    for (const item of page.Items ?? []) loaded.add(item.key?.S ?? '');
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const todo = listed.filter((k) => !loaded.has(k));
  await writeControl(todo);
  const naiveMs = Date.now() - started;
  if (todo.length !== SIZES.fresh)
    throw new Error(`naive found ${todo.length} new files, not ${SIZES.fresh}`);

  log('inlet: the new files arrive as events');
  await sendEvents(observer, h.resources.ingestQueue.url, bucket, fresh);
  started = Date.now();
  await drain(h, observer);
  const inletMs = Date.now() - started;

  log('backfill: list the bucket, check the ledger, enqueue');
  const queue = await observer.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('bench-backfill') }));
  const run = new BackfillRun({
    config: parsePipelineConfig({ tables: [{ name: 'hist', prefix: 'hist/' }] }),
    landingBucket: bucket,
    lister: new S3ObjectLister(observer.s3),
    ledger: h.ledger,
    enqueuer: new SqsEnqueuer({
      client: observer.sqs,
      queueUrl: queue.QueueUrl ?? '',
      recordsPerMessage: 10,
    }),
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 20, stepBudgetMs: 120_000, stepsPerExecution: 1_000_000 },
  });
  started = Date.now();
  let state = run.plan({ table: 'hist' }, { name: 'bench', startTime: new Date().toISOString() });
  while (state.next !== 'done') state = await run.step(state);
  const backfillMs = Date.now() - started;
  if (state.totals.listed !== existing.length + fresh.length || state.totals.alreadyIngested !== fresh.length)
    throw new Error(`backfill totals off: ${JSON.stringify(state.totals)}`);

  return {
    incrementalVsNaive: {
      existing: SIZES.existing,
      new: SIZES.fresh,
      naiveSeconds: seconds(naiveMs),
      inletSeconds: seconds(inletMs),
      speedup: Math.round((naiveMs / inletMs) * 100) / 100,
    },
    backfillObjectsPerSecond: Math.round(state.totals.listed / (backfillMs / 1000)),
  };
}

/** The batcher bundled as the CDK bundles it; its cold import time against the SDK clients' alone. */
async function bundles() {
  const dir = mkdtempSync(join(tmpdir(), 'inlet-bench-'));
  try {
    const options = {
      bundle: true,
      platform: 'node' as const,
      format: 'esm' as const,
      target: 'node22',
      minify: true,
      mainFields: ['module', 'main'],
      metafile: true,
      banner: {
        js: "import { createRequire as __inletRequire } from 'module'; const require = __inletRequire(import.meta.url);",
      },
      logLevel: 'silent' as const,
    };
    const batcher = await build({
      ...options,
      entryPoints: [join(projectRoot, 'functions', 'batcher.ts')],
      outfile: join(dir, 'batcher.mjs'),
    });
    const ownBytes = Object.entries(Object.values(batcher.metafile?.outputs ?? {})[0]?.inputs ?? {})
      .filter(([path]) => !path.includes('node_modules'))
      .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
    writeFileSync(
      join(dir, 'baseline.ts'),
      [
        "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
        "import { S3Client } from '@aws-sdk/client-s3';",
        "import { SQSClient } from '@aws-sdk/client-sqs';",
        'export const clients = [new DynamoDBClient({}), new S3Client({}), new SQSClient({})];',
      ].join('\n'),
    );
    await build({
      ...options,
      entryPoints: [join(dir, 'baseline.ts')],
      outfile: join(dir, 'baseline.mjs'),
      nodePaths: [join(projectRoot, 'node_modules')],
    });
    const env = {
      ...process.env,
      AWS_REGION: 'us-east-1',
      INLET_CONFIG: JSON.stringify({ tables: [{ name: 'events', prefix: 'events/' }] }),
      INLET_LEDGER_TABLE: 'ledger',
      INLET_MANIFEST_BUCKET: 'manifests',
      INLET_COMMIT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/commit.fifo',
      POWERTOOLS_METRICS_NAMESPACE: 'Inlet',
      NODE_NO_WARNINGS: '1',
    };
    const initMs = (file: string) => {
      const runs: number[] = [];
      for (let i = 0; i < 7; i++) {
        const result = spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`,
          ],
          { env, encoding: 'utf8' },
        );
        if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr}`);
        runs.push(Number(result.stdout.trim().split('\n').pop()));
      }
      return Math.round(percentile(runs, 50) * 10) / 10;
    };
    return {
      batcher: {
        bytes: statSync(join(dir, 'batcher.mjs')).size,
        ownBytes,
        initMs: initMs(join(dir, 'batcher.mjs')),
        sdkBaselineInitMs: initMs(join(dir, 'baseline.mjs')),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const begun = Date.now();
  const emulator = await startEmulator();
  const target = emulatorTarget(emulator.endpoint);
  // Handlers' clients (counted) and the bench's own (senders, probes: not counted).
  const clients = createClients(target);
  const observer = createClients(target);
  try {
    log(`cost and latency: ${SIZES.files} files`);
    const cost = await costAndLatency(clients, observer);
    log('latency at a steady arrival rate');
    const latencyMs = await latency(createClients(target), observer);
    log('raw writes, side by side');
    const rawMs = await rawWrites(observer);
    const incremental = await incrementalAndBackfill(createClients(target), observer);
    log('bundles');
    const bundle = await bundles();
    const cli = await cliTimings(observer, emulator.endpoint, { runs: quick ? 5 : 15, log });
    const results = {
      mode: quick ? 'quick' : 'full',
      measuredAt: new Date().toISOString(),
      where: 'moto server on this machine: relative numbers; AWS is faster per request',
      cost: cost.cost,
      // Plain unconditional puts of N items vs the handlers' time for N files (claims, staging, seal, commit).
      protocolVsRawRatio: Math.round((rawMs / cost.protocolMs) * 100) / 100,
      protocolSeconds: seconds(cost.protocolMs),
      rawSeconds: seconds(rawMs),
      incrementalVsNaive: incremental.incrementalVsNaive,
      bundles: bundle,
      latencyMs,
      backfillObjectsPerSecond: incremental.backfillObjectsPerSecond,
      cli,
      benchSeconds: seconds(Date.now() - begun),
    };
    writeFileSync(join(projectRoot, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log(JSON.stringify(results, null, 2));
  } finally {
    destroyClients(clients);
    destroyClients(observer);
    await emulator.stop();
  }
}

await main();

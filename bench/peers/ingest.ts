// Inlet and the Powertools pipeline on the same S3 events, duplicates included, in the same run: requests,
// write units and dollars per file, throughput, and what each pipeline's output holds (files lost, files
// listed twice), read back from the output, not assumed.
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { type AwsClients, createClients, destroyClients } from '../../local/aws/clients.ts';
import { DynamoDbLedger } from '../../shared/ingestion/aws/dynamodb-ledger.ts';
import { commitsInFlight } from '../../shared/ingestion/sweep.ts';
import { s3Notification } from '../../test/support/events.ts';
import { uniqueName } from '../../test/support/names.ts';
import { countRequests, RequestCounter } from '../../test/support/request-counter.ts';
import { billedUnits, requestsPerFile, usdPerMillionFiles } from '../prices.ts';
import { afterHop, type BenchContext, inChunks, log, pipeline, quick } from '../support.ts';
import { MESSAGE_ID_KEY, OBJECT_KEY, type OutputFile, powertoolsLoader } from './powertools-loader.ts';
import { type RunStats, type ServedPipeline, serve } from './serve.ts';

/** Files, and one duplicate event for every tenth file (S3 delivers at least once). */
export interface PeerSize {
  readonly files: number;
  readonly duplicateEvery: number;
}

/**
 * The same in both passes, so the emulator's figures and those at AWS's latencies compare. Full: 2,000 files
 * (200 Powertools invocations of 10 per pass and variant, Inlet's batches of 1,000 full), which keeps the
 * full run within its budget on this machine.
 */
export const PEER_SIZE: PeerSize = quick
  ? { files: 500, duplicateEvery: 10 }
  : { files: 2_000, duplicateEvery: 10 };
const TABLE = 'peers';

/** The run's events: one S3 notification body per file, duplicates identical, in a fixed shuffled order. */
function peerEvents(bucket: string, size: PeerSize) {
  const keys = Array.from(
    { length: size.files },
    (_, i) => `${TABLE}/2026/11/30/part-${String(i).padStart(6, '0')}.json`,
  );
  const bodies = keys.map((key) =>
    s3Notification({ bucket, key, size: 1_000, eventTime: '2026-11-30T12:00:00.000Z' }),
  );
  const duplicates = bodies.filter((_, i) => i % size.duplicateEvery === 0);
  return { keys, bodies: shuffle([...bodies, ...duplicates], 24) };
}

/** Fisher-Yates with a fixed seed (mulberry32): every run sends the same order, duplicates apart. */
function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** S3's own sends: one message per event, uncounted (the cost adds one SQS request per event for them). */
async function send(observer: AwsClients, queueUrl: string, bodies: readonly string[]) {
  await inChunks(bodies, 10, (batch) =>
    observer.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((MessageBody, j) => ({ Id: String(j), MessageBody })),
      }),
    ),
  );
}

/** What a pipeline's output holds against the files whose events were sent. */
function outcome(expected: readonly string[], listed: readonly string[]) {
  const counts = new Map<string, number>();
  for (const key of listed) counts.set(key, (counts.get(key) ?? 0) + 1);
  const lost = expected.filter((key) => !counts.has(key)).length;
  const duplicated = [...counts.values()].reduce((n, c) => n + c - 1, 0);
  const unexpected = [...counts.keys()].filter((key) => !expected.includes(key)).length;
  return { lost, duplicated, unexpected, files: counts.size };
}

function report(
  counter: RequestCounter,
  run: RunStats,
  events: number,
  files: number,
  eventBridgeEvents: number,
) {
  const units = billedUnits(counter, events, run.invocations, eventBridgeEvents);
  return {
    files,
    events,
    usdPerMillionFiles: usdPerMillionFiles(units, files),
    requestsPerFile: requestsPerFile(units, files),
    requests: Object.fromEntries([...counter.requests].sort()),
    // Per unit of Lambda concurrency: one invocation at a time, the time spent in invocations.
    filesPerSecond: Math.round(files / (run.busyMs / 1000)),
    invocations: run.invocations,
    busySeconds: Math.round(run.busyMs) / 1000,
    wallSeconds: Math.round(run.wallMs) / 1000,
  };
}

/** A Lambda context as the runtime passes it: the function's timeout starts with the invocation. */
function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A pipeline set up with its events queued: what the loop serves, and how its outcome is read back. */
interface Prepared<R> {
  readonly served: ServedPipeline;
  result(run: RunStats): Promise<R>;
  close(): void;
}

async function inlet(ctx: BenchContext, size: PeerSize) {
  const clients = createClients(ctx.target);
  const h = await pipeline(clients, TABLE, true);
  const probe = new DynamoDbLedger({ client: ctx.observer.dynamodb, tableName: h.resources.ledgerTable });
  const { keys, bodies } = peerEvents(h.resources.landingBucket, size);
  await send(ctx.observer, h.resources.ingestQueue.url, bodies);
  h.counter.reset();
  const hop = ctx.hops?.lambdaInvokeMs ?? 0;
  return {
    served: {
      name: 'inlet',
      sources: [
        {
          client: clients.sqs,
          queueUrl: h.resources.ingestQueue.url,
          batchSize: 1_000,
          batchingWindowMs: 1_000,
          handler: afterHop(hop, h.batcher()),
        },
        {
          client: clients.sqs,
          queueUrl: h.resources.commitQueue.url,
          batchSize: 10,
          handler: afterHop(hop, h.committer()),
        },
      ],
      // The bench's look at the ledger, on its own clients: not the pipeline's requests.
      quiet: () => commitsInFlight(probe, h.config.tables).then((inFlight) => !inFlight),
    },
    async result(run: RunStats) {
      const measured = report(h.counter, run, bodies.length, keys.length, h.published.length);
      const listed = (await h.manifests(TABLE)).flatMap((m) => m.files.map((f) => f.key));
      return { ...measured, ...outcome(keys, listed) };
    },
    close: () => destroyClients(clients),
  } satisfies Prepared<unknown>;
}

/** The Powertools pipeline with the SAM template of its docs: BatchSize default (10), timeout 5 s, visibility 30 s. */
async function powertools(ctx: BenchContext, size: PeerSize, name: string, eventKeyJmesPath: string) {
  const { observer } = ctx;
  const id = uniqueName('powertools');
  // The idempotency table as the docs' templates make it: partition key `id`, TTL on `expiration`.
  await observer.dynamodb.send(
    new CreateTableCommand({
      TableName: id,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  await observer.dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: id,
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    }),
  );
  await observer.s3.send(new CreateBucketCommand({ Bucket: id }));
  const { QueueUrl } = await observer.sqs.send(
    new CreateQueueCommand({ QueueName: id, Attributes: { VisibilityTimeout: '30' } }),
  );
  const queueUrl = QueueUrl ?? '';
  const { keys, bodies } = peerEvents('landing', size);
  await send(observer, queueUrl, bodies);

  const clients = createClients(ctx.target);
  const counter = new RequestCounter();
  countRequests(clients.dynamodb, 'dynamodb', counter);
  countRequests(clients.s3, 's3', counter);
  countRequests(clients.sqs, 'sqs', counter);
  const handler = powertoolsLoader({
    dynamodb: clients.dynamodb,
    s3: clients.s3,
    idempotencyTable: id,
    outputBucket: id,
    outputPrefix: 'output',
    eventKeyJmesPath,
  });
  return {
    served: {
      name,
      sources: [
        {
          client: clients.sqs,
          queueUrl,
          batchSize: 10,
          handler: afterHop(ctx.hops?.lambdaInvokeMs ?? 0, (event) =>
            handler(event, lambdaContext('powertools-loader', 5_000)),
          ),
        },
      ],
      quiet: async () => true,
    },
    async result(run: RunStats) {
      const listed = await outputKeys(observer, id, 'output/');
      return {
        ...report(counter, run, bodies.length, keys.length, 0),
        ...outcome(keys, listed),
        eventKeyJmesPath,
      };
    },
    close: () => destroyClients(clients),
  } satisfies Prepared<unknown>;
}

/** Every file every output object lists, in order (a file listed twice appears twice). */
async function outputKeys(observer: AwsClients, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await observer.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      const body = await observer.s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }));
      const { files } = JSON.parse(await (body.Body?.transformToString() ?? '{}')) as { files: OutputFile[] };
      keys.push(...files.map((f) => f.key));
    }
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/**
 * `peers.inlet` and `peers.powertools` (object-keyed, as a user ingesting files would key it), and with
 * `docsExampleKey` the docs' literal `messageId` key, only in the emulator's own mode (its outcome is what
 * matters, not its speed). Served in one loop, one invocation at a time (./serve.ts).
 */
export async function ingestPeers(ctx: BenchContext) {
  const duplicates = Math.ceil(PEER_SIZE.files / PEER_SIZE.duplicateEvery);
  log(
    `peers: Inlet and the Powertools pipeline (idempotency + batch)${ctx.hops ? '' : ", also keyed by the docs' messageId"} on ${PEER_SIZE.files} files and ${duplicates} duplicate events, one invocation at a time`,
  );
  const inletPipeline = await inlet(ctx, PEER_SIZE);
  const byObject = await powertools(ctx, PEER_SIZE, 'powertools', OBJECT_KEY);
  const byMessageId = ctx.hops
    ? undefined
    : await powertools(ctx, PEER_SIZE, 'docsExampleKey', MESSAGE_ID_KEY);
  const prepared = [inletPipeline, byObject, ...(byMessageId ? [byMessageId] : [])];
  try {
    const runs = await serve(
      ctx.observer,
      prepared.map((p) => p.served),
    );
    const runOf = (p: { served: ServedPipeline }) => {
      const run = runs.get(p.served.name);
      if (!run) throw new Error(`no run of ${p.served.name}`);
      return run;
    };
    const inletRun = await inletPipeline.result(runOf(inletPipeline));
    const powertoolsRun = await byObject.result(runOf(byObject));
    if (!byMessageId) return { inlet: inletRun, powertools: powertoolsRun };
    const docs = await byMessageId.result(runOf(byMessageId));
    return {
      inlet: inletRun,
      powertools: {
        ...powertoolsRun,
        docsExampleKey: {
          eventKeyJmesPath: docs.eventKeyJmesPath,
          lost: docs.lost,
          duplicated: docs.duplicated,
          usdPerMillionFiles: docs.usdPerMillionFiles,
          requestsPerFile: docs.requestsPerFile,
        },
      },
    };
  } finally {
    for (const p of prepared) p.close();
  }
}

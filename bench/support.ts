// What every benchmark shares: the sizes, the pipeline as deployed, sending events and draining queues.
import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import type { AwsClients } from '../local/aws/clients.ts';
import { queueDepth } from '../local/aws/queue-depth.ts';
import { venvPython } from '../local/paths.ts';
import { pollOnce } from '../local/poller.ts';
import { DynamoDbLedger } from '../shared/ingestion/aws/dynamodb-ledger.ts';
import { commitsInFlight } from '../shared/ingestion/sweep.ts';
import type { AwsTarget } from '../shared/kernel/aws/target.ts';
import { s3Notification } from '../test/support/events.ts';
import { PipelineHarness } from '../test/support/harness.ts';

export const quick = process.argv.includes('--quick');
export const SIZES = quick
  ? { files: 2_000, existingSmall: 1_000, existing: 5_000, fresh: 200 }
  : { files: 10_000, existingSmall: 10_000, existing: 100_000, fresh: 1_000 };

/** What a benchmark gets: the emulator, the bench's own uncounted clients, and the results so far. */
export interface BenchContext {
  readonly target: AwsTarget;
  /** The emulator's URL, for benchmarks that start processes against it. */
  readonly endpoint: string;
  /** Senders and probes: their requests are not counted. */
  readonly observer: AwsClients;
  /** Results of the benchmarks that ran before, for ratios across them. */
  readonly results: Readonly<Record<string, unknown>>;
  /** Fixtures a benchmark leaves for a later one (e.g. a bucket with many objects), by name. */
  readonly fixtures: Map<string, unknown>;
  /**
   * AWS-latency mode (bench/aws-latency.ts): `target` and `endpoint` reach the emulator through a proxy that
   * holds each request as long as AWS takes to answer it, and these are the hops the proxy cannot see, run
   * in this process: a Lambda invocation and a Step Functions task. Absent: the emulator as it answers.
   */
  readonly hops?: { readonly lambdaInvokeMs: number; readonly stepFunctionsTaskMs: number };
  /**
   * CPU seconds so far of this process, the processes it waited for, and the emulator: a figure the machine's
   * load moves far less than wall time.
   */
  readonly cpuSeconds: () => number;
}

/** `handler`, entered `ms` later (the invocation's own latency), or as is when `ms` is 0. */
export function afterHop<A extends unknown[], R>(
  ms: number,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  if (ms <= 0) return handler;
  return async (...args: A) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return handler(...args);
  };
}

export interface Benchmark {
  readonly name: string;
  /** Returns result keys merged into bench/results.json. */
  run(ctx: BenchContext): Promise<Record<string, unknown>>;
}

export const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
export const seconds = (ms: number) => Math.round(ms) / 1000;
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Runs `send` over `items` in chunks of `size`, 8 chunks at a time. */
export async function inChunks<T>(items: readonly T[], size: number, send: (chunk: T[]) => Promise<unknown>) {
  const limit = pLimit(8);
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  await Promise.all(chunks.map((chunk) => limit(() => send(chunk))));
}

export async function sendEvents(
  clients: AwsClients,
  queueUrl: string,
  bucket: string,
  keys: readonly string[],
) {
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

/** How `drain` invokes the handlers, and what it measures besides their wall time. */
export interface DrainOptions {
  /** The batcher's batching window. @default 1,000 */
  readonly batchingWindowMs?: number;
  /** A Lambda invocation's own latency before each handler call (AWS-latency mode). @default 0 */
  readonly lambdaInvokeMs?: number;
  /** Runs after each committer invocation, outside the timed handlers: what a commit's event starts (the sink). */
  readonly afterCommit?: () => Promise<void>;
}

/**
 * Lambda's SQS mappings, one invocation at a time, until nothing is queued or in flight. Returns the
 * invocations and the time spent inside the handlers (the protocol's own work, without the emulator's queue
 * polling, which costs far more in moto than in SQS).
 */
export async function drain(h: PipelineHarness, observer: AwsClients, options: DrainOptions = {}) {
  const { batchingWindowMs = 1_000, lambdaInvokeMs = 0, afterCommit } = options;
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
  const batcher = afterHop(lambdaInvokeMs, timed(h.batcher()));
  const committer = afterHop(lambdaInvokeMs, timed(h.committer()));
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
    if (commit.received > 0) await afterCommit?.();
    if (ingest.received > 0 || commit.received > 0) continue;
    const queued = (await depth(h.resources.ingestQueue.url)) + (await depth(h.resources.commitQueue.url));
    if (queued === 0 && !(await commitsInFlight(ledger, h.config.tables))) return { invocations, handlerMs };
  }
}

/** A pipeline as deployed by default: Lambda batch size 1,000, a 1 s window (the default is 20 s). */
export const pipeline = (
  clients: AwsClients,
  table: string,
  countRequests: boolean,
  batchingWindowMs = 1_000,
) =>
  PipelineHarness.create(clients, {
    config: { tables: [{ name: table, prefix: `${table}/` }], leaseSeconds: 300 },
    batchSize: 1_000,
    batchingWindowMs,
    visibilityTimeout: 300,
    notifications: false,
    countRequests,
  });

/** Uploads `keys`, 16 at a time; each holds `body(i)` (default one byte). */
export async function putObjects(
  clients: AwsClients,
  bucket: string,
  keys: readonly string[],
  body: (i: number) => string = () => 'x',
): Promise<void> {
  const limit = pLimit(16);
  let done = 0;
  await Promise.all(
    keys.map((Key, i) =>
      limit(async () => {
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: body(i) }));
        done += 1;
        if (done % 20_000 === 0) log(`  ${done} objects uploaded`);
      }),
    ),
  );
}

/** Objects and bytes under `prefix` (a Delta table's data files and log, a pipeline's output). */
export async function prefixSize(clients: AwsClients, bucket: string, prefix: string) {
  let objects = 0;
  let bytes = 0;
  let token: string | undefined;
  do {
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      objects += 1;
      bytes += o.Size ?? 0;
    }
    token = page.NextContinuationToken;
  } while (token);
  return { objects, bytes };
}

/** Runs a Python script of the project venv with `input` as JSON on stdin; its stdout is one JSON answer. */
export function venvJson<T>(script: string, args: readonly string[], input: unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const child = spawn(venvPython, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${basename(script)} exited ${code}`));
      resolve(JSON.parse(out) as T);
    });
    child.stdin.end(JSON.stringify(input));
  });
}

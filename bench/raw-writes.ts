// The protocol against plain writes (issue 24, goal 0.8): the same N files through the batcher and committer
// handlers, and as N unconditional puts of the same items, in interleaved rounds (protocol, raw, protocol,
// raw ...), each side on fresh tables, on the emulator as it answers and again at AWS's latencies.

import { loadavg } from 'node:os';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { type AwsClients, createClients, destroyClients } from '../local/aws/clients.ts';
import { latencyOf } from '../local/aws-latencies.ts';
import { startLatencyProxy } from '../local/latency-proxy.ts';
import { pollOnce } from '../local/poller.ts';
import { parsePipelineConfig } from '../shared/config/pipeline-config.ts';
import { fileKey } from '../shared/ingestion/ledger-keys.ts';
import { parseMessage } from '../shared/ingestion/parse-message.ts';
import { Router } from '../shared/ingestion/routing.ts';
import { type AwsTarget, emulatorTarget } from '../shared/kernel/aws/target.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { s3Notification, sqsRecord } from '../test/support/events.ts';
import { PipelineHarness } from '../test/support/harness.ts';
import { createPipelineResources } from '../test/support/resources.ts';
import { contractKeys, type ProtocolTimed, type Round, sideBySide, spread, type Timed } from './rounds.ts';
import { type Benchmark, log, quick } from './support.ts';

/** Lambda's batch as deployed (batch size 1,000): the batcher's invocations for N files. */
const BATCH = 1_000;
const TABLE = 'events';
const CONFIG = { tables: [{ name: TABLE, prefix: `${TABLE}/` }], leaseSeconds: 300 };
/**
 * Files per round, and rounds on the emulator and at AWS's latencies. `--quick` keeps the benchmark within
 * about a minute on a quiet machine: 1,000 files (one invocation, one batch, one version) per round. A small
 * round first, unmeasured, warms both sides (the handlers' code, the clients' connections).
 */
export const ROUNDS = quick
  ? { files: 1_000, emulator: 5, awsLatency: 3 }
  : { files: 5_000, emulator: 5, awsLatency: 3 };
const WARM_UP_FILES = 200;

/** N files' S3 events, one record per message as S3 sends them, in the batcher's invocations. */
export function ingestEvents(files: number, bucket: string): SQSEvent[] {
  const eventTime = new Date().toISOString();
  const sentAt = Date.now();
  const records = Array.from({ length: files }, (_, i) =>
    sqsRecord({
      messageId: `m-${i}`,
      receiptHandle: `r-${i}`,
      body: s3Notification({
        bucket,
        key: `${TABLE}/2026/11/30/part-${String(i).padStart(6, '0')}.json`,
        size: 1000,
        eventTime,
      }),
      queue: 'bench-ingest',
      sentAt,
      senderId: 'bench',
    }),
  );
  const events: SQSEvent[] = [];
  for (let i = 0; i < records.length; i += BATCH) events.push({ Records: records.slice(i, i + BATCH) });
  return events;
}

/** Times `run` in wall and CPU seconds (this process and the emulator). */
async function timed(cpuSeconds: () => number, run: () => Promise<void>): Promise<Timed> {
  const started = performance.now();
  const cpu = cpuSeconds();
  await run();
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSeconds() - cpu };
}

/**
 * The protocol's side: the batcher invoked with N files' events (Lambda's batches of 1,000), then the
 * committer on the commit queue until every batch is committed. Timed: the handlers only, not the
 * commit queue's polling (moto's ReceiveMessage scans the whole queue, SQS's does not).
 */
export async function protocolSide(
  clients: AwsClients,
  files: number,
  cpuSeconds: () => number,
): Promise<ProtocolTimed> {
  const h = await PipelineHarness.create(clients, {
    config: CONFIG,
    batchSize: BATCH,
    visibilityTimeout: 300,
    notifications: false,
    countRequests: false,
  });
  const events = ingestEvents(files, h.landingBucket);
  const batcher = h.batcher();
  const committer = h.committer();
  const batcherTime = { seconds: 0, cpuSeconds: 0 };
  const committerTime = { seconds: 0, cpuSeconds: 0 };
  const add = (sum: { seconds: number; cpuSeconds: number }, t: Timed) => {
    sum.seconds += t.seconds;
    sum.cpuSeconds += t.cpuSeconds;
  };
  for (const event of events) {
    let response: SQSBatchResponse = { batchItemFailures: [] };
    add(
      batcherTime,
      await timed(cpuSeconds, async () => {
        response = await batcher(event);
      }),
    );
    if (response.batchItemFailures.length > 0)
      throw new Error(`the batcher failed ${response.batchItemFailures.length} records`);
  }
  for (;;) {
    const commit = await pollOnce(
      { client: clients.sqs, queueUrl: h.resources.commitQueue.url, batchSize: 10 },
      async (event) => {
        let response: SQSBatchResponse = { batchItemFailures: [] };
        add(
          committerTime,
          await timed(cpuSeconds, async () => {
            response = await committer(event);
          }),
        );
        return response;
      },
    );
    if (commit.crashed) throw commit.error;
    if (commit.received === 0 && (await h.ledgerQuiet())) break;
  }
  const committed = (await h.manifests(TABLE)).reduce((n, m) => n + m.fileCount, 0);
  if (committed !== files) throw new Error(`committed ${committed} of ${files} files`);
  return {
    seconds: batcherTime.seconds + committerTime.seconds,
    cpuSeconds: batcherTime.cpuSeconds + committerTime.cpuSeconds,
    batcher: batcherTime,
    committer: committerTime,
  };
}

/**
 * The raw side: the items the claims write (same keys, same attributes), as unconditional `PutItem`s at the
 * batcher's claim concurrency, on a fresh ledger table.
 */
export async function rawSide(clients: AwsClients, files: number, cpuSeconds: () => number): Promise<Timed> {
  const { ledgerTable, landingBucket } = await createPipelineResources(clients, { notifications: false });
  const router = new Router(parsePipelineConfig(CONFIG));
  const leaseUntil = String(Date.now() + CONFIG.leaseSeconds * 1000);
  const items = ingestEvents(files, landingBucket)
    .flatMap((e) => e.Records)
    .flatMap((r) => parseMessage(r.body).objects)
    .flatMap((object) => {
      const routed = router.route(object);
      return routed.kind === 'routed' ? routed.files : [];
    })
    .map((file) => {
      const { pk, sk } = fileKey(file.table, file.identity);
      return {
        pk: { S: pk },
        sk: { S: sk },
        batchId: { S: '01JRAW0000000000000000000' },
        leaseUntil: { N: leaseUntil },
      };
    });
  if (items.length !== files) throw new Error(`routed ${items.length} of ${files} files`);
  const limit = pLimit(DEFAULTS.claimConcurrency);
  return timed(cpuSeconds, async () => {
    await Promise.all(
      items.map((Item) =>
        limit(() => clients.dynamodb.send(new PutItemCommand({ TableName: ledgerTable, Item }))),
      ),
    );
  });
}

/** A warm-up round, then `rounds` of protocol then raw, each side on its own fresh tables. */
async function interleaved(
  target: AwsTarget,
  rounds: number,
  cpuSeconds: () => number,
  label: string,
  warmUp: boolean,
) {
  // The same clients for both sides: one connection pool, one set of middleware.
  const clients = createClients(target);
  try {
    if (warmUp) {
      await protocolSide(clients, WARM_UP_FILES, cpuSeconds);
      await rawSide(clients, WARM_UP_FILES, cpuSeconds);
    }
    const measured: Round[] = [];
    // The machine's 1-minute load at the end of each round: on 2 cores, above 2 both sides waited for a CPU.
    const loads: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const protocol = await protocolSide(clients, ROUNDS.files, cpuSeconds);
      const raw = await rawSide(clients, ROUNDS.files, cpuSeconds);
      log(
        `  ${label} round ${i + 1}/${rounds}: protocol ${protocol.seconds.toFixed(2)} s (batcher ${protocol.batcher.seconds.toFixed(2)} s) (${protocol.cpuSeconds.toFixed(2)} CPU s), raw ${raw.seconds.toFixed(2)} s (${raw.cpuSeconds.toFixed(2)} CPU s), load ${(loadavg()[0] ?? 0).toFixed(1)}`,
      );
      measured.push({ protocol, raw });
      loads.push(loadavg()[0] ?? 0);
    }
    return { ...sideBySide(measured), loadAverage1m: spread(loads) };
  } finally {
    destroyClients(clients);
  }
}

/** The protocol's handler time for N files against N plain puts of the same items, round after round. */
export const rawWrites: Benchmark = {
  name: 'raw-writes',
  async run({ target, endpoint, cpuSeconds }) {
    log(`protocol against raw writes: ${ROUNDS.files} files, ${ROUNDS.emulator} rounds on the emulator`);
    const emulator = await interleaved(target, ROUNDS.emulator, cpuSeconds, 'emulator', true);
    log(`protocol against raw writes: ${ROUNDS.awsLatency} rounds at AWS's latencies`);
    const proxy = await startLatencyProxy({ upstream: endpoint, latencyMs: latencyOf });
    let awsLatency: Awaited<ReturnType<typeof interleaved>>;
    try {
      awsLatency = await interleaved(
        emulatorTarget(proxy.endpoint),
        ROUNDS.awsLatency,
        cpuSeconds,
        'aws latency',
        false,
      );
    } finally {
      await proxy.stop();
    }
    return {
      ...contractKeys(emulator),
      protocolVsRaw: {
        files: ROUNDS.files,
        concurrency: DEFAULTS.claimConcurrency,
        emulator,
        awsLatency,
      },
    };
  },
};

// The bronze sink's share of the cost per file (`cost.bronze`, `cost.withBronzeUsdPerMillionFiles`): the cost
// benchmark's files also go to a Delta table, the sink invoked as AWS invokes it (each commit's
// `BatchCommitted` event, through its rule, on the sink's FIFO queue), and every request it makes counted at
// the wire, SDK retries included.
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type AwsClients, createClients, destroyClients } from '../local/aws/clients.ts';
import { latencyOf } from '../local/aws-latencies.ts';
import { startLatencyProxy } from '../local/latency-proxy.ts';
import { pollOnce } from '../local/poller.ts';
import { makeSinkHandler } from '../shared/bronze/sink-handler.ts';
import { sinkQueueVisibilitySeconds } from '../shared/config/function-env.ts';
import type { PipelineConfigInput } from '../shared/config/pipeline-config.ts';
import { emulatorTarget } from '../shared/kernel/aws/target.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { silentLog } from '../shared/kernel/log.ts';
import { MemoryMetrics } from '../shared/kernel/metrics.ts';
import { BATCH_COMMITTED, ENV, EVENT_SOURCE } from '../shared/kernel/names.ts';
import { sinkRuntimeFromEnv } from '../shared/runtime/sink.ts';
import { functionEnv } from '../test/support/function-env.ts';
import type { PipelineHarness } from '../test/support/harness.ts';
import { RequestCounter } from '../test/support/request-counter.ts';
import { billedUnits, PRICES, usdPerMillionFiles } from './prices.ts';

/** The sink function's memory as the construct deploys it by default. */
export const SINK_MEMORY_MB = DEFAULTS.sink.memoryMb;
/**
 * "At 1,769 MB, a function has the equivalent of one vCPU (one vCPU-second of credits per second)"
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html): below that, CPU work takes
 * 1,769 / memory times as long as on one core.
 */
const ONE_VCPU_MB = 1_769;
/** The sink queue's visibility timeout as the construct sets it for the default sink timeout. */
const SINK_QUEUE_VISIBILITY_SECONDS = sinkQueueVisibilitySeconds(DEFAULTS.sink.timeoutSeconds);

/** `landingFile(i)`: a small JSON Lines file, about 1,000 bytes, as the cost benchmark's events say. */
export function landingFile(i: number): string {
  const lines: string[] = [];
  for (let row = 0; row < 8; row++) {
    const id = i * 8 + row;
    lines.push(
      `{"id":${id},"customer":"c-${id % 5_003}","amount":${(id % 977) / 10},"paid":${id % 2 === 0},"note":"order ${id} of the cost benchmark"}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The table config the cost benchmark ingests with: its files also go to a JSON Lines bronze table. */
export const bronzeTable = (name: string): PipelineConfigInput['tables'][number] => ({
  name,
  prefix: `${name}/`,
  bronze: { format: 'jsonl' },
});

export interface SinkMeter {
  /**
   * What the commits since the last call published, delivered to the sink queue as EventBridge delivers
   * them, and the sink invoked (batch size 10, as deployed) until the queue is empty.
   */
  afterCommit(): Promise<void>;
  /** The sink's billed units and dollars for `files` landing files. */
  result(files: number): { readonly usdPerMillionFiles: number; readonly [key: string]: unknown };
  stop(): Promise<void>;
}

/**
 * The bronze sink beside a harness's pipeline, built by the sink Lambda's own composition root
 * (`sinkRuntimeFromEnv`), its clients and its event source's polls pointed at a proxy that holds each
 * request for its AWS latency (local/aws-latencies.ts) and counts it: the invocations' wall time is then an
 * upper bound of their duration on AWS (the emulator's own time stays on top).
 */
export async function startSinkMeter(
  h: PipelineHarness,
  ctx: { readonly endpoint: string; readonly observer: AwsClients },
  tables: PipelineConfigInput['tables'],
): Promise<SinkMeter> {
  const { observer } = ctx;
  const { QueueUrl: queueUrl } = await observer.sqs.send(
    new CreateQueueCommand({
      QueueName: `${h.resources.ledgerTable}-sink.fifo`,
      Attributes: {
        FifoQueue: 'true',
        ContentBasedDeduplication: 'true',
        VisibilityTimeout: String(SINK_QUEUE_VISIBILITY_SECONDS),
      },
    }),
  );
  if (!queueUrl) throw new Error('no sink queue');
  const { Attributes } = await observer.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const wire = await startLatencyProxy({ upstream: ctx.endpoint, latencyMs: latencyOf });
  const poller = createClients(emulatorTarget(wire.endpoint));
  const runtime = sinkRuntimeFromEnv(
    {
      [ENV.awsEndpoint]: wire.endpoint,
      AWS_REGION: 'us-east-1',
      // The default sink's environment, through the construct's writer.
      ...functionEnv('sink', {
        manifestBucket: h.resources.manifestBucket,
        ledgerTable: h.resources.ledgerTable,
        config: { tables },
        sinkQueueUrl: queueUrl,
      }),
    },
    { log: silentLog, metrics: new MemoryMetrics() },
  );
  const sink = makeSinkHandler(runtime);
  let delivered = 0;
  /** Deliveries, each ending with a receive that found the queue empty. */
  let rounds = 0;
  let invocations = 0;
  let wallMs = 0;
  let cpuMs = 0;
  const timed = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    invocations += 1;
    const started = performance.now();
    const cpu = process.cpuUsage();
    try {
      return await sink(event, { getRemainingTimeInMillis: () => 15 * 60_000 });
    } finally {
      const used = process.cpuUsage(cpu);
      cpuMs += (used.user + used.system) / 1000;
      wallMs += performance.now() - started;
    }
  };
  return {
    async afterCommit() {
      const events = h.published.slice(delivered);
      if (events.length === 0) return;
      delivered = h.published.length;
      rounds += 1;
      // EventBridge's target delivery: one SendMessage per event, the group fixed per rule (the table).
      for (const detail of events)
        await observer.sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: JSON.stringify({ source: EVENT_SOURCE, 'detail-type': BATCH_COMMITTED, detail }),
            MessageGroupId: detail.table,
          }),
        );
      for (;;) {
        const polled = await pollOnce(
          { client: poller.sqs, queueUrl, queueArn: Attributes?.QueueArn, batchSize: 10 },
          timed,
        );
        if (polled.crashed) throw new Error(`sink invocation failed: ${String(polled.error)}`);
        if (polled.received === 0) break;
      }
    },
    result(files) {
      const counted = new RequestCounter();
      for (const [operation, n] of Object.entries(wire.delayed().requests)) {
        const [service, name] = operation.split(':');
        counted.requests.set(`${service}.${name}`, n);
        // The sink's DynamoDB calls are single-item (its cursor): one unit each, items under 1 KB / 4 KB.
        if (service === 'dynamodb' && /^(Put|Update|Delete)Item$/.test(name ?? ''))
          counted.dynamodbWriteItems += n;
        if (service === 'dynamodb' && name === 'GetItem') counted.dynamodbReadItems += n;
      }
      // The last poll of each delivery found the queue empty: Lambda's pollers make such receives whatever
      // the traffic (a fixed cost per queue, not per file), so they are left out.
      const receives = counted.requests.get('sqs.ReceiveMessage') ?? 0;
      counted.requests.set('sqs.ReceiveMessage', Math.max(0, receives - rounds));
      // EventBridge's SendMessage of each event to the sink queue is billed to the queue's owner, as S3's is.
      const units = billedUnits(counted, delivered, invocations, 0);
      const lambdaSeconds = wallMs / 1000 + (cpuMs / 1000) * (ONE_VCPU_MB / SINK_MEMORY_MB - 1);
      const gbSeconds = (SINK_MEMORY_MB / 1024) * lambdaSeconds;
      const requestsUsd = usdPerMillionFiles(units, files);
      const durationUsd = Math.round(((gbSeconds * PRICES.lambdaArmPerGbSecond) / files) * 1e6 * 100) / 100;
      const per = (n: number) => Math.round((n / files) * 10_000) / 10_000;
      return {
        files,
        invocations,
        events: delivered,
        requests: Object.fromEntries([...counted.requests].sort()),
        s3GetsPerFile: per(counted.requests.get('s3.GetObject') ?? 0),
        s3PutsPerFile: per(counted.requests.get('s3.PutObject') ?? 0),
        requestsPerFile: {
          s3GetAndOther: per(units.s3GetAndOtherRequests),
          s3PutCopyPostList: per(units.s3PutCopyPostListRequests),
          sqs: per(units.sqsRequests),
          dynamodbWriteUnits: per(units.dynamodbWriteUnits),
          dynamodbReadUnits: per(units.dynamodbReadUnits),
          lambdaInvocations: per(invocations),
        },
        handlerSeconds: Math.round(wallMs) / 1000,
        cpuSeconds: Math.round(cpuMs) / 1000,
        memoryMB: SINK_MEMORY_MB,
        lambdaSeconds: Math.round(lambdaSeconds * 1000) / 1000,
        gbSeconds: Math.round(gbSeconds * 1000) / 1000,
        usdPerMillionFiles: Math.round((requestsUsd + durationUsd) * 100) / 100,
        usdPerMillionFilesRequests: requestsUsd,
        usdPerMillionFilesDuration: durationUsd,
      };
    },
    async stop() {
      destroyClients(poller);
      await wire.stop();
    },
  };
}

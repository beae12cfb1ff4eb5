// Requests and dollars per file for a backlog drained at the deployed batching window.
import { createClients, destroyClients } from '../shared/aws/clients.ts';
import type { RequestCounter } from '../test/support/request-counter.ts';
import { type Benchmark, drain, log, pipeline, SIZES, seconds, sendEvents } from './support.ts';

/** AWS list prices, us-east-1, on-demand, as published at the date below (not fetched: this machine is offline). */
export const PRICES = {
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

/** What a pipeline asked of AWS for a run: the billed units the prices above apply to. */
export interface BilledUnits {
  readonly sqsRequests: number;
  readonly dynamodbWriteUnits: number;
  readonly dynamodbReadUnits: number;
  readonly s3Puts: number;
  readonly s3Gets: number;
  readonly lambdaInvocations: number;
  readonly eventBridgeEvents: number;
}

/** Those units at list prices, in dollars per million files, to the cent. */
export function usdPerMillionFiles(units: BilledUnits, files: number): number {
  const usd =
    (units.sqsRequests / 1e6) * PRICES.sqsPerMillionRequests +
    (units.dynamodbWriteUnits / 1e6) * PRICES.dynamodbPerMillionWriteUnits +
    (units.dynamodbReadUnits / 1e6) * PRICES.dynamodbPerMillionReadUnits +
    (units.s3Puts / 1e3) * PRICES.s3PerThousandPuts +
    (units.s3Gets / 1e3) * PRICES.s3PerThousandGets +
    (units.lambdaInvocations / 1e6) * PRICES.lambdaPerMillionInvocations +
    (units.eventBridgeEvents / 1e6) * PRICES.eventBridgePerMillionEvents;
  return Math.round((usd / files) * 1e6 * 100) / 100;
}

/**
 * The billed units a request counter saw, plus S3's own send of each event to SQS (one request per event,
 * which no client of ours makes). DynamoDB write units count transactional items twice, as DynamoDB bills them.
 */
export function billedUnits(
  c: RequestCounter,
  sentEvents: number,
  lambdaInvocations: number,
  eventBridgeEvents: number,
): BilledUnits {
  const s3Puts = c.requests.get('s3.PutObject') ?? 0;
  return {
    sqsRequests: c.total('sqs.') + sentEvents,
    dynamodbWriteUnits: c.dynamodbWriteItems + c.dynamodbTransactItems,
    dynamodbReadUnits: c.dynamodbReadItems + (c.requests.get('dynamodb.Query') ?? 0),
    s3Puts,
    s3Gets: c.total('s3.') - s3Puts,
    lambdaInvocations,
    eventBridgeEvents,
  };
}

/** `cost.requestsPerFile`'s shape (design.md §6), for any pipeline's units. */
export function requestsPerFile(units: BilledUnits, files: number) {
  const perFile = (x: number) => Math.round((x / files) * 10_000) / 10_000;
  return {
    sqs: perFile(units.sqsRequests),
    dynamodbWriteUnits: perFile(units.dynamodbWriteUnits),
    dynamodbReadUnits: perFile(units.dynamodbReadUnits),
    s3: perFile(units.s3Puts + units.s3Gets),
    stepFunctions: 0,
    lambdaInvocations: perFile(units.lambdaInvocations),
    eventBridge: perFile(units.eventBridgeEvents),
  };
}

export const cost: Benchmark = {
  name: 'cost',
  async run({ target, observer }) {
    log(`cost and latency: ${SIZES.files} files`);
    // The handlers' clients, counted.
    const clients = createClients(target);
    try {
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

      const n = SIZES.files;
      const units = billedUnits(h.counter, n, invocations, h.published.length);
      return {
        cost: {
          files: n,
          requestsPerFile: requestsPerFile(units, n),
          requests: Object.fromEntries([...h.counter.requests].sort()),
          versions: manifests.length,
          usdPerMillionFiles: usdPerMillionFiles(units, n),
          prices: PRICES,
        },
        protocolSeconds: seconds(protocolMs),
      };
    } finally {
      destroyClients(clients);
    }
  },
};

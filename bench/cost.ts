// Requests and dollars per file for a backlog drained at the deployed batching window.
import { createClients, destroyClients } from '../shared/aws/clients.ts';
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
        protocolSeconds: seconds(protocolMs),
      };
    } finally {
      destroyClients(clients);
    }
  },
};

// Incremental vs naive, restated: the same new files picked up at a small and a large bucket. A hand-rolled
// "what did I load last time" job (list everything, diff against a control table, record the new files)
// grows with the bucket; Inlet takes the new files' events and should not.
import { BatchWriteItemCommand, CreateTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type AwsClients, createClients } from '../local/aws/clients.ts';
import type { PipelineHarness } from '../test/support/harness.ts';
import { uniqueName } from '../test/support/names.ts';
import {
  type Benchmark,
  drain,
  inChunks,
  log,
  pipeline,
  putObjects,
  SIZES,
  seconds,
  sendEvents,
} from './support.ts';

/** The bucket this benchmark fills, left for the backfill and reconcile benchmarks. */
export interface HistoryFixture {
  readonly h: PipelineHarness;
  readonly bucket: string;
  readonly objects: number;
  /** Objects the ledger already holds (the new files Inlet ingested). */
  readonly ingested: number;
  /** Day prefixes the keys spread over (hist/dt=YYYY-MM-DD/). */
  readonly days: number;
  /** The naive job's control table: every object of the bucket is recorded in it. */
  readonly control: string;
  /** Keys of objects not yet in the bucket (the next new files), `count` of them. */
  freshKeys(count: number): string[];
}
export const HISTORY = 'history';
export const HISTORY_DAYS = 97;
export const HISTORY_KEY_TIME = 'hist/dt=YYYY-MM-DD/';

const DAY_MS = 86_400_000;
/** Keys carry a write date, today and the 96 days before: the reconcile window's prefixes pick from them. */
const key = (i: number, today: number) =>
  `hist/dt=${new Date(today - (i % HISTORY_DAYS) * DAY_MS).toISOString().slice(0, 10)}/obj-${String(i).padStart(7, '0')}.json`;

interface Pickup {
  readonly existing: number;
  readonly naiveSeconds: number;
  readonly naiveRequests: number;
  /** DynamoDB write units the naive job's record of the new files costs (one per file). */
  readonly naiveWriteUnits: number;
  readonly inletSeconds: number;
  readonly inletRequests: number;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export const incremental: Benchmark = {
  name: 'incremental',
  async run({ target, observer, fixtures }) {
    const h = await pipeline(createClients(target), 'hist', true);
    const bucket = h.resources.landingBucket;
    const today = Date.now();
    const control = uniqueName('control');
    await observer.dynamodb.send(
      new CreateTableCommand({
        TableName: control,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
      }),
    );
    let next = 0;
    const upTo = async (existing: number) => {
      const keys = Array.from({ length: existing - next }, (_, i) => key(next + i, today));
      log(`uploading ${keys.length} objects (to ${existing}), loading the naive control table`);
      await putObjects(observer, bucket, keys);
      await writeControl(observer, control, keys);
      next = existing;
    };

    /** The same number of new files, as the naive job and as Inlet see them. */
    const pickUp = async (existing: number): Promise<Pickup> => {
      const fresh = Array.from({ length: SIZES.fresh }, (_, i) => key(next + i, today));
      await putObjects(observer, bucket, fresh);
      next += fresh.length;

      log(`naive at ${existing}: list, scan, diff, record`);
      const naive = await naivePickup(observer, bucket, control);
      if (naive.found !== SIZES.fresh)
        throw new Error(`naive found ${naive.found} new files, not ${SIZES.fresh}`);

      log(`inlet at ${existing}: the new files arrive as events`);
      const inlet = await inletPickup(h, observer, bucket, fresh);
      return {
        existing,
        naiveSeconds: seconds(naive.ms),
        naiveRequests: naive.requests,
        naiveWriteUnits: naive.writeUnits,
        ...inlet,
      };
    };

    await upTo(SIZES.existingSmall);
    const small = await pickUp(SIZES.existingSmall);
    await upTo(SIZES.existing);
    const large = await pickUp(SIZES.existing);

    fixtures.set(HISTORY, {
      h,
      bucket,
      objects: next,
      ingested: 2 * SIZES.fresh,
      days: HISTORY_DAYS,
      control,
      freshKeys(count) {
        const keys = Array.from({ length: count }, (_, i) => key(next + i, today));
        next += count;
        return keys;
      },
    } satisfies HistoryFixture);
    return {
      incrementalVsNaive: {
        new: SIZES.fresh,
        existing: SIZES.existing,
        naiveSeconds: large.naiveSeconds,
        naiveRequests: large.naiveRequests,
        naiveWriteUnits: large.naiveWriteUnits,
        inletSeconds: large.inletSeconds,
        inletRequests: large.inletRequests,
        speedup: ratio(large.naiveSeconds, large.inletSeconds),
        runs: [small, large],
        // Large bucket over small: time and requests (Inlet's goal: at most 1.2).
        inletGrowth: {
          time: ratio(large.inletSeconds, small.inletSeconds),
          requests: ratio(large.inletRequests, small.inletRequests),
        },
        naiveGrowth: {
          time: ratio(large.naiveSeconds, small.naiveSeconds),
          requests: ratio(large.naiveRequests, small.naiveRequests),
        },
      },
    };
  },
};

/**
 * Inlet picking up `keys` of `bucket` from their events: the seconds until they are committed and the
 * requests counted, plus the one SQS request per file S3 makes sending the event.
 */
export async function inletPickup(
  h: PipelineHarness,
  observer: AwsClients,
  bucket: string,
  keys: readonly string[],
  lambdaInvokeMs = 0,
) {
  await sendEvents(observer, h.resources.ingestQueue.url, bucket, keys);
  h.counter.reset();
  const started = Date.now();
  await drain(h, observer, { lambdaInvokeMs });
  return { inletSeconds: seconds(Date.now() - started), inletRequests: h.counter.total('') + keys.length };
}

/** The control table's writes for `keys`: BatchWriteItem, 25 items each; returns the requests made. */
async function writeControl(clients: AwsClients, control: string, keys: readonly string[]): Promise<number> {
  let writes = 0;
  await inChunks(keys, 25, (chunk) => {
    writes += 1;
    return clients.dynamodb.send(
      new BatchWriteItemCommand({
        RequestItems: { [control]: chunk.map((k) => ({ PutRequest: { Item: { key: { S: k } } } })) },
      }),
    );
  });
  return writes;
}

/**
 * One run of the hand-rolled "what did I load last time" job: list every object under `hist/`, scan the
 * control table, take the difference, record it. Returns its time, its requests and how many files it found.
 */
export async function naivePickup(clients: AwsClients, bucket: string, control: string) {
  let requests = 0;
  const started = Date.now();
  const listed: string[] = [];
  let token: string | undefined;
  do {
    requests += 1;
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'hist/', ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) listed.push(o.Key ?? '');
    token = page.NextContinuationToken;
  } while (token);
  const loaded = new Set<string>();
  let startKey: Record<string, unknown> | undefined;
  do {
    requests += 1;
    const page = await clients.dynamodb.send(
      new ScanCommand({ TableName: control, ExclusiveStartKey: startKey as never }),
    );
    for (const item of page.Items ?? []) loaded.add(item.key?.S ?? '');
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const todo = listed.filter((k) => !loaded.has(k));
  requests += await writeControl(clients, control, todo);
  // BatchWriteItem bills each put item (under 1 KB) as one write unit.
  return { ms: Date.now() - started, requests, found: todo.length, writeUnits: todo.length };
}

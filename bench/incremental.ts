// What a hand-rolled "what did I load last time" job does each run against Inlet taking the new files' events.
import { BatchWriteItemCommand, CreateTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createClients } from '../shared/aws/clients.ts';
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

/** The bucket this benchmark fills, left for the backfill benchmark to list. */
export interface HistoryFixture {
  readonly h: PipelineHarness;
  readonly bucket: string;
  readonly objects: number;
  /** Objects the ledger already holds (the new files Inlet ingested). */
  readonly ingested: number;
}
export const HISTORY = 'history';

/** Naive: list everything, diff against a control table, record the new files. */
export const incremental: Benchmark = {
  name: 'incremental',
  async run({ target, observer, fixtures }) {
    const h = await pipeline(createClients(target), 'hist', false);
    const bucket = h.resources.landingBucket;
    const key = (i: number) =>
      `hist/${String(i % 97).padStart(2, '0')}/obj-${String(i).padStart(7, '0')}.json`;
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

    const fixture: HistoryFixture = {
      h,
      bucket,
      objects: existing.length + fresh.length,
      ingested: fresh.length,
    };
    fixtures.set(HISTORY, fixture);
    return {
      incrementalVsNaive: {
        existing: SIZES.existing,
        new: SIZES.fresh,
        naiveSeconds: seconds(naiveMs),
        inletSeconds: seconds(inletMs),
        speedup: Math.round((naiveMs / inletMs) * 100) / 100,
      },
    };
  },
};

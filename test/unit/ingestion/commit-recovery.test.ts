import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { BatchStore } from '../../../shared/ingestion/batch-store.ts';
import { CommitBatch, type CommitDeps } from '../../../shared/ingestion/commit-batch.ts';
import {
  HANDOVER_AFTER_RECEIVES,
  makeCommitterHandler,
} from '../../../shared/ingestion/committer-handler.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import {
  DefiniteFailureError,
  StagedListMissingError,
  ThrottledError,
} from '../../../shared/kernel/errors.ts';
import type { RetryLater } from '../../../shared/kernel/message-visibility.ts';
import { fakeTarget } from '../../contract/fake-target.ts';

const file = (key: string) => ({
  bucket: 'landing',
  key,
  size: 10,
  eTag: 'e',
  versionId: null,
  sequencer: null,
  eventTime: '2026-11-30T00:00:00.000Z',
});

const quietLog = { debug() {}, info() {}, warn() {}, error() {} };
const noEvents = { batchCommitted: async () => {} };

/** In-memory ledger and bucket (the simulation's, faults off) and a batcher's stage + seal. */
async function pipeline() {
  const { ledger, store } = await fakeTarget(1);
  let sealedAt = 1_000;
  const seal = async (batchId: string) => {
    const files = [file(`orders/${batchId}`)];
    const stagedKey = await store.putStagedList({ table: 'orders', batchId, files });
    await ledger.sealBatch({
      table: 'orders',
      batchId,
      fileCount: 1,
      bytes: 10,
      stagedKey,
      sealedAt: sealedAt++,
      minEventTime: '2026-11-30T00:00:00.000Z',
    });
  };
  return { ledger, store, seal };
}

const deps = (ledger: Ledger, store: BatchStore): CommitDeps => ({
  ledger,
  store,
  events: noEvents,
  log: quietLog,
  now: () => Date.parse('2026-11-30T01:00:00.000Z'),
  sleep: async () => {},
  random: () => 0.5,
});

describe('finishing a grouped reservation another committer left', () => {
  it('reads the staged lists named in the reservation, no batch item per batch, and retries throttled reads', async () => {
    const { ledger, store, seal } = await pipeline();
    for (const id of ['B1', 'B2', 'B3']) await seal(id);
    // Committer 1 reserves v1 for the group and dies before the manifest.
    const dying: BatchStore = Object.assign(Object.create(store) as BatchStore, {
      putManifestIfAbsent: async () => {
        throw new Error('Lambda killed');
      },
    });
    await expect(new CommitBatch(deps(ledger, dying)).commit('orders', 'B1')).rejects.toThrow(
      'Lambda killed',
    );
    expect((await ledger.getTable('orders')).pending).toMatchObject({
      version: 1,
      batchIds: ['B1', 'B2', 'B3'],
      stagedKeys: ['_staging/orders/B1.json', '_staging/orders/B2.json', '_staging/orders/B3.json'],
    });
    await seal('B4');

    // Committer 2, for B4: every staged-list read is throttled twice before it answers.
    const batchReads: string[] = [];
    const counting: Ledger = Object.assign(Object.create(ledger) as Ledger, {
      getBatch: (table: string, id: string) => {
        batchReads.push(id);
        return ledger.getBatch(table, id);
      },
    });
    const throttles = new Map<string, number>();
    const throttled: BatchStore = Object.assign(Object.create(store) as BatchStore, {
      getStagedList: async (key: string) => {
        const n = (throttles.get(key) ?? 0) + 1;
        throttles.set(key, n);
        if (n <= 2) throw new ThrottledError(`read staged list failed: SlowDown (${key})`);
        return store.getStagedList(key);
      },
    });
    const outcome = await new CommitBatch(deps(counting, throttled)).commit('orders', 'B4');

    expect(outcome).toMatchObject({ result: 'committed', version: 2, finishedPending: [1] });
    expect(batchReads).toEqual(['B4']);
    expect((await store.getManifest('orders', 1))?.batchIds).toEqual(['B1', 'B2', 'B3']);
    for (const id of ['B1', 'B2', 'B3'])
      expect(await ledger.getBatch('orders', id)).toMatchObject({ version: 1 });
    expect(await ledger.getTable('orders')).toMatchObject({ head: 2, pending: undefined });
  });
});

describe('the committer handler', () => {
  const record = (messageId: string, table: string, receives: number) => ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: JSON.stringify({ table, batchId: `${table}-batch` }),
    attributes: { MessageGroupId: table, ApproximateReceiveCount: String(receives) },
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:commit.fifo',
  });
  const run = async (getBatch: Ledger['getBatch'], records: ReturnType<typeof record>[]) => {
    const given: RetryLater[] = [];
    const handler = makeCommitterHandler({
      ...deps({ getBatch } as Ledger, {} as BatchStore),
      metrics: { count() {}, milliseconds() {}, flush() {} },
      retries: { retryLater: async (messages) => void given.push(...messages) },
    });
    const response = await handler({ Records: records } as unknown as SQSEvent, {
      getRemainingTimeInMillis: () => 60_000,
    });
    return { failed: response.batchItemFailures.map((f) => f.itemIdentifier), given };
  };

  it('gives a table whose commit failed for load its messages back after a backoff by receive count', async () => {
    const { failed, given } = await run(
      async (table) => {
        if (table === 'busy') throw new ThrottledError('get batch failed: ProvisionedThroughputExceeded');
        return undefined; // the other table's batch was never sealed: dropped, acknowledged
      },
      [record('m1', 'busy', 3), record('m2', 'other', 1), record('m3', 'busy', 3)],
    );
    expect(failed).toEqual(['m1', 'm3']);
    expect(given.map((g) => g.receiptHandle)).toEqual(['rh-m1', 'rh-m3']);
    // Third receive: 5 s x 2^2 = 20 s, jittered over its upper half.
    for (const g of given) expect(g.seconds).toBe(15);
  });

  it('acknowledges a commit still failing for load at its fifth receive: the sweeper re-requests it, no DLQ', async () => {
    const { failed, given } = await run(async () => {
      throw new ThrottledError('get batch failed: ProvisionedThroughputExceeded');
    }, [record('m1', 'busy', HANDOVER_AFTER_RECEIVES), record('m2', 'busy', HANDOVER_AFTER_RECEIVES - 1)]);
    expect(failed).toEqual(['m2']);
    expect(given.map((g) => g.receiptHandle)).toEqual(['rh-m2']);
  });

  it.each([
    ['a missing staged list', new StagedListMissingError('_staging/orders/x.json')],
    ['a refusal such as AccessDenied', new DefiniteFailureError('get batch failed: AccessDenied')],
  ])('leaves %s at the queue timeout, bound for the DLQ, even at its fifth receive', async (_, failure) => {
    const { failed, given } = await run(async () => {
      throw failure;
    }, [record('m1', 'orders', 1), record('m2', 'other', HANDOVER_AFTER_RECEIVES)]);
    expect(failed).toEqual(['m1', 'm2']);
    expect(given).toEqual([]);
  });

  it('starts no commit it cannot finish before the Lambda timeout: the done ones are acknowledged, the rest given back at once', async () => {
    // A killed invocation acknowledges nothing: every message in it, done or not, counts a receive toward
    // the DLQ (maxReceiveCount 10), so commits slower than the timeout would dead-letter the ones done first.
    let now = 0;
    const given: RetryLater[] = [];
    const handler = makeCommitterHandler({
      ...deps(
        {
          getBatch: async () => {
            now += 2_000; // each commit takes 2 s (a throttled partition)
            return undefined; // never sealed: dropped and acknowledged once it ran
          },
        } as unknown as Ledger,
        {} as BatchStore,
      ),
      now: () => now,
      metrics: { count() {}, milliseconds() {}, flush() {} },
      retries: { retryLater: async (messages) => void given.push(...messages) },
    });
    const records = Array.from({ length: 10 }, (_, i) => record(`m${i}`, 'orders', 1));
    const timeoutMs = 10_000;

    const response = await handler({ Records: records } as unknown as SQSEvent, {
      getRemainingTimeInMillis: () => timeoutMs - now,
    });

    expect(now).toBeLessThan(timeoutMs);
    const failed = response.batchItemFailures.map((f) => f.itemIdentifier);
    const done = records.length - failed.length;
    // 10 s: at least three commits of 2 s fit with the time kept for returning.
    expect(done).toBeGreaterThanOrEqual(3);
    expect(failed).toEqual(records.slice(done).map((r) => r.messageId));
    expect(given.map((g) => g.receiptHandle)).toEqual(records.slice(done).map((r) => r.receiptHandle));
    for (const g of given) expect(g.seconds).toBe(0);
  });
});

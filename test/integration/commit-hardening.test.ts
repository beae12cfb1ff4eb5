import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import type { MiddlewareStack } from '@smithy/types';
import { afterAll, describe, expect, it } from 'vitest';
import { type AwsClients, destroyClients } from '../../local/aws/clients.ts';
import { pollOnce } from '../../local/poller.ts';
import type { BatchStore } from '../../shared/ingestion/batch-store.ts';
import { CommitBatch } from '../../shared/ingestion/commit-batch.ts';
import { makeCommitterHandler } from '../../shared/ingestion/committer-handler.ts';
import { manifestKey, stagedListKey } from '../../shared/ingestion/manifest.ts';
import { sweepStale } from '../../shared/ingestion/sweep.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';
import { injectSdkFault, shortBackoffClients } from '../support/sdk-faults.ts';

const clientSets: AwsClients[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness(tables = [{ name: 'orders', prefix: 'orders/' }]) {
  // Milliseconds between SDK attempts instead of seconds, and no adaptive rate limiter (see there).
  const clients = shortBackoffClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, {
    config: { tables, leaseSeconds: 2 },
    functionClients: shortBackoffClients,
  });
}

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };

interface Injection {
  /** SDK command name, e.g. `TransactWriteItemsCommand`. */
  readonly command: string;
  readonly match?: (input: Record<string, unknown>) => boolean;
  /** `refuse`: answer with the error, the request never reaches AWS. `applied`: forward it, then fail. */
  readonly mode: 'refuse' | 'applied';
  readonly error: () => Error;
  /** How many matching requests get the fault. @default 1 */
  readonly times?: number;
}

/**
 * SDK middleware that answers matching requests with an AWS error, as real AWS does and moto never does.
 * Added at `initialize`, before the SDK's own retries: what the product code sees is what a client whose
 * retries ended with this error reports.
 */
function injectFault(client: { middlewareStack: MiddlewareStack<object, object> }, fault: Injection) {
  let left = fault.times ?? 1;
  const hits = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context as { commandName?: string }).commandName;
      const input = args.input as Record<string, unknown>;
      if (left > 0 && name === fault.command && (fault.match?.(input) ?? true)) {
        left -= 1;
        hits.count += 1;
        if (fault.mode === 'applied') await next(args);
        throw fault.error();
      }
      return next(args);
    },
    { step: 'initialize', name: `fault-${Math.random()}` },
  );
  return hits;
}

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const updateExpression = (input: Record<string, unknown>) =>
  JSON.stringify((input.TransactItems as { Update?: { UpdateExpression?: string } }[])[0]?.Update ?? {});
const isReserve = (input: Record<string, unknown>) => updateExpression(input).includes('pending = :pending');
const isFinalize = (input: Record<string, unknown>) => updateExpression(input).includes('REMOVE pending');
const isManifestPut = (input: Record<string, unknown>) => String(input.Key).includes('/_manifests/');

async function ingest(h: PipelineHarness, files: readonly string[]) {
  for (const key of files) await h.put(key);
  await h.pollIngest();
}

async function objectExists(h: PipelineHarness, key: string): Promise<boolean> {
  try {
    await h.clients.s3.send(new GetObjectCommand({ Bucket: h.resources.manifestBucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey') return false;
    throw error;
  }
}

describe('committer on AWS errors the emulator never produces', () => {
  it('S3 409 ConditionalRequestConflict on the manifest put is retried, not taken for a fork', async () => {
    const h = await harness();
    const files = keys(3);
    await ingest(h, files);
    const hits = injectFault(h.clientsOf('Committer').s3 as never, {
      command: 'PutObjectCommand',
      match: isManifestPut,
      mode: 'refuse',
      error: () =>
        Object.assign(new Error('A conflicting conditional operation is currently in progress'), {
          name: 'ConditionalRequestConflict',
          $metadata: { httpStatusCode: 409 },
        }),
      times: 2,
    });

    const poll = await h.pollCommit();

    expect(hits.count).toBe(2);
    expect(poll.failed).toBe(0);
    expect((await h.ledger.getTable('orders')).head).toBe(1);
    expect(h.metrics.totals.get('CommitErrors') ?? 0).toBe(0);
    expect(await h.verify(files.map((key) => ({ table: 'orders', key })))).toMatchObject(clean);
  });

  it('a TransactionConflict on the commit transaction is retried within the invocation', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const hits = injectFault(h.clientsOf('Committer').dynamodb as never, {
      command: 'TransactWriteItemsCommand',
      match: isFinalize,
      mode: 'refuse',
      error: () => cancelled('TransactionConflict', 'None'),
      times: 2,
    });

    const poll = await h.pollCommit();

    expect(hits.count).toBe(2);
    expect(poll.failed).toBe(0);
    expect((await h.ledger.getTable('orders')).head).toBe(1);
  });

  // The case: attempt 1 is applied and its answer lost (500), the SDK's later attempts are throttled,
  // and the SDK reports only the throttle.
  const appliedThenThrottled = ['apply-then-500', 'throttle', 'throttle', 'throttle'] as const;

  it('a reservation applied although the SDK reported a throttle is found by re-reading the table', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const fault = injectSdkFault(h.clientsOf('Committer').dynamodb as never, {
      match: (name, input) => name === 'TransactWriteItemsCommand' && isReserve(input),
      script: appliedThenThrottled,
    });

    const poll = await h.pollCommit();

    expect(fault.faulted()).toBe(1);
    expect(poll.failed).toBe(0);
    expect(await h.ledger.getTable('orders')).toMatchObject({ head: 1, pending: undefined });
  });

  it('a commit transaction applied although the SDK reported a throttle counts as committed', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const fault = injectSdkFault(h.clientsOf('Committer').dynamodb as never, {
      match: (name, input) => name === 'TransactWriteItemsCommand' && isFinalize(input),
      script: appliedThenThrottled,
    });

    const poll = await h.pollCommit();

    expect(fault.faulted()).toBe(1);
    expect(poll.failed).toBe(0);
    expect(h.published).toHaveLength(1);
    expect((await h.ledger.getTable('orders')).head).toBe(1);
  });

  it('a commit transaction throttled on every SDK attempt is retried within the invocation', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    let calls = 0;
    // Only the first call: every SDK attempt of it throttled, so the SDK gives up and reports a throttle.
    const fault = injectSdkFault(h.clientsOf('Committer').dynamodb as never, {
      match: (name, input) => name === 'TransactWriteItemsCommand' && isFinalize(input) && calls++ === 0,
      script: ['throttle', 'throttle', 'throttle', 'throttle'],
    });

    const poll = await h.pollCommit();

    expect(fault.faulted()).toBe(1);
    expect(poll.failed).toBe(0);
    expect((await h.ledger.getTable('orders')).head).toBe(1);
  });
});

describe('after the commit: staged list, event, sealed index', () => {
  it('a failed BatchCommitted publish does not fail the commit; the sweeper has it published later', async () => {
    const h = await harness();
    const files = keys(3);
    await ingest(h, files);
    const failingPublisher = makeCommitterHandler({
      ...h.ports('Committer'),
      events: {
        batchCommitted: async () => {
          throw new Error('EventBridge rejected BatchCommitted');
        },
      },
      log: h.log,
      metrics: h.metrics,
      ...h.clock(),
    });

    const poll = await pollOnce(
      { client: h.clientsOf('Committer').sqs, queueUrl: h.resources.commitQueue.url, batchSize: 10 },
      failingPublisher,
    );

    // The commit stands and its message is acknowledged: the table's FIFO group is not blocked.
    expect(poll.failed).toBe(0);
    expect((await h.ledger.getTable('orders')).head).toBe(1);
    expect(h.metrics.totals.get('CommitsUnpublished')).toBe(1);
    expect(h.published).toEqual([]);
    // Committed but not published: still in the sealed index, so the sweeper finds it.
    expect(await h.ledgerQuiet()).toBe(false);
    expect(await h.sweep(0)).toMatchObject({ unpublished: 1, resent: 0 });
    await h.pollCommit();
    expect(h.published).toMatchObject([{ table: 'orders', version: 1 }]);
    expect(await h.ledgerQuiet()).toBe(true);
    expect(await h.verify(files.map((key) => ({ table: 'orders', key })))).toMatchObject(clean);
  });

  it('the staged list is deleted once its batch is committed', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    if (!sealed) throw new Error('no sealed batch');
    const key = stagedListKey('orders', sealed.batchId);
    expect(await objectExists(h, key)).toBe(true);

    await h.runUntilQuiet();

    expect((await h.ledger.getBatch('orders', sealed.batchId))?.state).toBe('COMMITTED');
    expect(await objectExists(h, key)).toBe(false);
    expect(await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('a staged list deleted by a racing committer means already committed, not an error', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    if (!sealed) throw new Error('no sealed batch');
    const racer = new CommitBatch({ ...h.ports('Committer'), log: h.log, ...h.clock() });
    // The racer commits the whole batch (and deletes its list) between our reservation and our read.
    const store: BatchStore = Object.assign(Object.create(h.store), {
      getStagedList: async (key: string) => {
        const [reserved] = [(await h.ledger.getTable('orders')).pending];
        if (reserved) await racer.commit('orders', sealed.batchId);
        return h.store.getStagedList(key);
      },
    });
    const slow = new CommitBatch({ ...h.ports('Committer'), store, log: h.log, ...h.clock() });

    const outcome = await slow.commit('orders', sealed.batchId);

    expect(outcome).toMatchObject({ result: 'already-committed', version: 1 });
    expect((await h.ledger.getTable('orders')).head).toBe(1);
  });

  it('a SEALED batch whose staged list is missing fails with its own error and metric', async () => {
    const h = await harness();
    await ingest(h, keys(2));
    const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    if (!sealed) throw new Error('no sealed batch');
    // Deleted behind the protocol's back (an operator, a lifecycle rule).
    await h.clients.s3.send(
      new DeleteObjectCommand({
        Bucket: h.resources.manifestBucket,
        Key: stagedListKey('orders', sealed.batchId),
      }),
    );

    const poll = await h.pollCommit();

    expect(poll.failed).toBe(1);
    expect(h.metrics.totals.get('StagedListsMissing')).toBe(1);
    expect(h.logs.some((l) => l.message === 'staged list of a sealed batch is missing')).toBe(true);
  });
});

describe('a manifest bucket ahead of the ledger', () => {
  it('is refused before reserving, with what to do, and does not hold up other tables', async () => {
    const h = await harness([
      { name: 'orders', prefix: 'orders/' },
      { name: 'events', prefix: 'events/' },
    ]);
    // Manifest v1 of orders from an earlier ledger (re-created) or another stack sharing the prefix.
    await h.clients.s3.send(
      new PutObjectCommand({
        Bucket: h.resources.manifestBucket,
        Key: manifestKey('orders', 1),
        Body: JSON.stringify({
          table: 'orders',
          version: 1,
          batchIds: ['01OLDSTACK'],
          files: [],
          entries: [],
        }),
      }),
    );
    await ingest(h, keys(2));
    await ingest(h, keys(2, 'events/e'));

    const poll = await h.pollCommit();

    expect(poll.received).toBe(2);
    expect(poll.failed).toBe(1);
    expect(await h.ledger.getTable('orders')).toMatchObject({ head: 0, pending: undefined });
    expect((await h.ledger.getTable('events')).head).toBe(1);
    expect(h.metrics.totals.get('ManifestAheadOfLedger')).toBe(1);
    const refusal = h.logs.find((l) => l.message === 'commit failed');
    expect(String(refusal?.extra?.error)).toContain(
      "manifest bucket already has versions of table orders beyond the ledger's head",
    );
  });
});

describe('sweeper', () => {
  it('finishes tables the configuration no longer names, from the ledger alone', async () => {
    const h = await harness([
      { name: 'orders', prefix: 'orders/' },
      { name: 'legacy', prefix: 'legacy/' },
    ]);
    const files = keys(2, 'legacy/l');
    for (const key of files) await h.put(key);
    // Sealed, the commit request lost, the events gone: only the ledger knows of this batch.
    expect((await h.pollIngest({ point: 'commitQueue.requestCommit', when: 'before' })).crashed).toBe(true);
    await h.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: h.resources.ingestQueue.url }));

    // No configuration at all is passed: the sweeper scans the sealed index.
    const result = await sweepStale({ ...h.ports('Sweeper'), log: h.log, now: h.now }, 0);

    expect(result).toMatchObject({ resent: 1, tables: 1, errors: 0, complete: true });
    await h.runUntilQuiet();
    expect(await h.verify(files.map((key) => ({ table: 'legacy', key })))).toMatchObject(clean);
  });

  it('counts entries SendMessageBatch refused as deferred, not as re-sent', async () => {
    const h = await harness();
    for (const key of keys(2)) await h.put(key);
    expect((await h.pollIngest({ point: 'commitQueue.requestCommit', when: 'before' })).crashed).toBe(true);
    // SQS accepts the call (200) and refuses its one entry, as it may under load.
    h.clientsOf('Sweeper').sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if ((context as { commandName?: string }).commandName !== 'SendMessageBatchCommand')
          return next(args);
        const entries = (args.input as { Entries: { Id: string }[] }).Entries;
        return {
          response: {},
          output: {
            $metadata: { httpStatusCode: 200 },
            Successful: [],
            Failed: entries.map((e) => ({ Id: e.Id, Code: 'ThrottlingException', SenderFault: false })),
          },
        } as never;
      },
      { step: 'initialize', name: 'refuseBatchEntries' },
    );

    const result = await sweepStale({ ...h.ports('Sweeper'), log: h.log, now: h.now }, 0);

    expect(result).toMatchObject({ resent: 0, deferred: 1, errors: 0 });
    h.clientsOf('Sweeper').sqs.middlewareStack.remove('refuseBatchEntries');
    expect(await sweepStale({ ...h.ports('Sweeper'), log: h.log, now: h.now }, 0)).toMatchObject({
      resent: 1,
    });
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { pollOnce } from '../../local/poller.ts';
import { destroyClients } from '../../shared/aws/clients.ts';
import { makeBatcherHandler } from '../../shared/handlers/batcher-handler.ts';
import { testClients } from '../support/aws.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';
import { injectSdkFault } from '../support/sdk-faults.ts';

// AWS behaviour moto never produces, injected below the SDK's retry middleware so the real client retries
// it: docs/protocol.md, "What AWS does that the emulator doesn't".
const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness(leaseSeconds = 60) {
  const clients = testClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, {
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds },
    batchSize: 20,
  });
}

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const expectedOf = (list: readonly string[]) => list.map((key) => ({ table: 'orders', key }));
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };

/** Uploads, then waits until every event is on the ingest queue, so one invocation can take them all. */
async function putAll(h: PipelineHarness, files: readonly string[]): Promise<void> {
  for (const key of files) await h.put(key);
  const deadline = Date.now() + 20_000;
  while ((await h.queueDepth(h.resources.ingestQueue.url)) < files.length) {
    if (Date.now() > deadline)
      throw new Error(`the ${files.length} S3 events did not reach the queue in 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The claim put of a file whose key ends with one of these names. */
const claimOf = (names: readonly string[]) => (command: string, input: Record<string, unknown>) => {
  if (command !== 'PutItemCommand') return false;
  const pk = (input.Item as { pk?: { S?: string } } | undefined)?.pk?.S ?? '';
  return pk.startsWith('FILE#') && names.some((name) => pk.endsWith(name));
};

describe('SDK retries that hide an applied write', () => {
  it('a claim applied on attempt 1 (answered 500), then throttled on every retry, ends committed exactly once', async () => {
    const h = await harness();
    const files = keys(20);
    const faultyNames = files.filter((_, i) => i % 7 === 0).map((k) => k.slice('orders/'.length));
    const fault = injectSdkFault(h.clients.dynamodb, {
      match: claimOf(faultyNames),
      calls: faultyNames.length,
      // Every later attempt is throttled, however many the client makes (DynamoDB's default is more than 3).
      script: ['apply-then-500', ...Array<'throttle'>(9).fill('throttle')],
    });
    for (const key of files) await h.put(key);

    await h.pollIngest();
    expect(fault.faulted()).toBeGreaterThanOrEqual(faultyNames.length);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    // The ledger agrees with the manifests: each claim names the batch whose version lists the file (what
    // `inlet files` reports), never a batch that sealed without it.
    const listedIn = new Map<string, string>();
    for (const manifest of await h.manifests('orders'))
      for (const file of manifest.files) listedIn.set(file.key, manifest.batchIds.join(','));
    const claims = await h.ledger.scanFiles({ table: 'orders' });
    expect(claims).toHaveLength(files.length);
    for (const claim of claims) {
      const key = claim.identity.split('#').slice(2).join('#');
      expect(listedIn.get(key), key).toContain(claim.batchId);
    }
  });
});

describe('batcher under AWS load and Lambda limits', () => {
  it('a dead batch of many files is fenced once, then its files move with single-item writes', async () => {
    const h = await harness(2);
    const files = keys(40);
    await putAll(h, files);
    // Dies right after its claims: no staging, no seal, nothing deleted.
    expect((await h.pollIngest({ point: 'store.putStagedList', when: 'before' }, 50)).crashed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    // On AWS, transactions that touch one item at once cancel each other (TransactionConflict): a fence item
    // re-written by every file's takeover would recover a few files per round. Count what the takeover writes.
    const fences = injectSdkFault(h.clients.dynamodb, {
      match: (command, input) =>
        command === 'PutItemCommand' &&
        (input.Item as { state?: { S?: string } } | undefined)?.state?.S === 'ABORTED',
      script: [],
    });
    const transactions = injectSdkFault(h.clients.dynamodb, {
      match: (command) => command === 'TransactWriteItemsCommand',
      script: [],
    });
    const rescue = await h.pollIngest(undefined, 50);
    expect(rescue.failed).toBe(0);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBe(files.length);
    expect(fences.faulted()).toBe(1);
    expect(transactions.faulted()).toBe(0);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });

  it('claims throttled on every SDK attempt are retried within the invocation, not failed', async () => {
    const h = await harness();
    const files = keys(10);
    const throttledNames = files.slice(0, 3).map((k) => k.slice('orders/'.length));
    injectSdkFault(h.clients.dynamodb, {
      match: claimOf(throttledNames),
      calls: throttledNames.length,
      // Every attempt of the first call of each: the SDK gives up and reports the throttle.
      script: Array<'throttle'>(4).fill('throttle'),
    });
    await putAll(h, files);
    const first = await h.pollIngest(undefined, 20);
    expect(first.failed).toBe(0);
    expect((await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER))[0]?.fileCount).toBe(10);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });

  it('the claim deadline follows the Lambda remaining time: late claims are deferred, the rest seals', async () => {
    const clients = testClients();
    clientSets.push(clients);
    // The default lease (600 s) would put half of it past any Lambda timeout.
    const h = await PipelineHarness.create(clients, {
      config: { tables: [{ name: 'orders', prefix: 'orders/' }], claimConcurrency: 1 },
    });
    const files = keys(10);
    for (const key of files) await h.put(key);
    const ports = h.ports();
    const slow = new Proxy(ports.ledger, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'claimFile') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<typeof target.claimFile>) => {
          await new Promise((resolve) => setTimeout(resolve, 400));
          return target.claimFile(...args);
        };
      },
    });
    const retries: { seconds: number }[] = [];
    const handler = makeBatcherHandler({
      ...ports,
      ledger: slow,
      config: h.config,
      log: h.log,
      metrics: h.metrics,
      now: h.now,
      retries: { retryLater: async (later) => void retries.push(...later) },
    });
    const started = Date.now();
    // 11.5 s left: after the 10 s kept for sealing, about 1.5 s of claims (3-4 at 400 ms each).
    const context = { getRemainingTimeInMillis: () => 11_500 - (Date.now() - started) };
    const result = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.ingestQueue.url, batchSize: 10 },
      (event) => handler(event, context),
    );
    const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    expect(sealed?.fileCount).toBeGreaterThan(0);
    expect(sealed?.fileCount).toBeLessThan(files.length);
    expect(result.failed).toBeGreaterThan(0);
    // Deferred messages come back at once, not after the queue's visibility timeout.
    expect(retries).toHaveLength(result.failed);
    expect(retries.every((r) => r.seconds <= 2)).toBe(true);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });
});

import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { type AwsClients, destroyClients } from '../../local/aws/clients.ts';
import { queueDepth } from '../../local/aws/queue-depth.ts';
import { testClients } from '../support/aws.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';
import { type AttemptFault, injectSdkFault, shortBackoffClients } from '../support/sdk-faults.ts';
import { waitFor } from '../support/wait.ts';

// AWS behaviour moto never produces, injected below the SDK's retry middleware so the real client retries
// it: docs/aws-behaviour.md.
const clientSets: AwsClients[] = [];
afterAll(() => clientSets.forEach(destroyClients));

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const expectedOf = (list: readonly string[]) => list.map((key) => ({ table: 'orders', key }));
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };

/** Waits until `n` messages of the ingest queue can be received (sent, or back from a dead invocation). */
const visibleIngest = (h: PipelineHarness, n: number, what: string) =>
  waitFor(
    `${what}: ${n} messages visible on the ingest queue`,
    () => queueDepth(h.clients.sqs, h.resources.ingestQueue.url),
    (depth) => depth.visible >= n,
  );

/** Uploads, then waits until every event is on the ingest queue, so one invocation can take them all. */
async function putAll(h: PipelineHarness, files: readonly string[]): Promise<void> {
  for (const key of files) await h.put(key);
  await visibleIngest(h, files.length, 'the S3 events of the uploads');
}

async function harness(leaseSeconds = 60) {
  // Milliseconds between SDK attempts instead of seconds, and no adaptive rate limiter (see there).
  const clients = shortBackoffClients();
  clientSets.push(clients);
  const h = await PipelineHarness.create(clients, {
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds },
    batchSize: 20,
    functionClients: shortBackoffClients,
  });
  // S3 sends a test notification (s3:TestEvent) when the configuration is saved, moto too (AWS:
  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketNotificationConfiguration.html). It is
  // taken off first, so each test's invocations get exactly its files' events: a batch as large as the
  // files is then full at once, instead of waiting out its 5 s batching window for one more message.
  await visibleIngest(h, 1, 'the s3:TestEvent of the notification configuration');
  expect((await h.pollIngest(undefined, 1)).received).toBe(1);
  expect(h.metrics.totals.get('EventsIgnored')).toBe(1);
  return h;
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
    const fault = injectSdkFault(h.clientsOf('Batcher').dynamodb, {
      match: claimOf(faultyNames),
      calls: faultyNames.length,
      // Every later attempt is throttled, however many the client makes (DynamoDB's default is more than 3).
      script: ['apply-then-500', ...Array<'throttle'>(9).fill('throttle')],
    });
    await putAll(h, files);

    await h.pollIngest(undefined, files.length);
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
    expect((await h.pollIngest({ point: 'store.putStagedList', when: 'before' }, files.length)).crashed).toBe(
      true,
    );
    // Its messages come back after the visibility timeout (1 s); its lease (2 s) ends on the batchers' clock.
    await visibleIngest(h, files.length, "the dead invocation's messages after their visibility timeout");
    h.clockSkewMs += 2_100;
    // On AWS, transactions that touch one item at once cancel each other (TransactionConflict): a fence item
    // re-written by every file's takeover would recover a few files per round. Count what the takeover writes.
    const fences = injectSdkFault(h.clientsOf('Batcher').dynamodb, {
      match: (command, input) =>
        command === 'PutItemCommand' &&
        (input.Item as { state?: { S?: string } } | undefined)?.state?.S === 'ABORTED',
      script: [],
    });
    const transactions = injectSdkFault(h.clientsOf('Batcher').dynamodb, {
      match: (command) => command === 'TransactWriteItemsCommand',
      script: [],
    });
    const rescue = await h.pollIngest(undefined, files.length);
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
    injectSdkFault(h.clientsOf('Batcher').dynamodb, {
      match: claimOf(throttledNames),
      calls: throttledNames.length,
      // Every attempt of the first call of each: the SDK gives up and reports the throttle.
      script: Array<'throttle'>(4).fill('throttle'),
    });
    await putAll(h, files);
    const first = await h.pollIngest(undefined, files.length);
    expect(first.failed).toBe(0);
    expect((await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER))[0]?.fileCount).toBe(10);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });
});

describe("the fault tests' clients", () => {
  /** For DynamoDB, S3 and SQS: the attempts of one call answered `fault` every time, and the waits between. */
  async function retries(clients: AwsClients, fault: AttemptFault) {
    const calls = [
      () => clients.dynamodb.send(new ListTablesCommand({})),
      () => clients.s3.send(new ListBucketsCommand({})),
      () => clients.sqs.send(new ListQueuesCommand({})),
    ];
    for (const client of [clients.dynamodb, clients.s3, clients.sqs])
      injectSdkFault(client, { match: () => true, script: Array<AttemptFault>(10).fill(fault) });
    const seen: { attempts?: number; delayMs?: number }[] = [];
    for (const call of calls) {
      const error = await call().then(
        () => undefined,
        (e: { $metadata?: { attempts?: number; totalRetryDelay?: number } }) => e,
      );
      seen.push({ attempts: error?.$metadata?.attempts, delayMs: error?.$metadata?.totalRetryDelay });
    }
    return seen;
  }

  it("make as many SDK attempts as the product's clients, without their seconds of backoff", async () => {
    const product = testClients();
    const short = shortBackoffClients();
    clientSets.push(product, short);

    const throttled = await retries(short, 'throttle');
    // Server errors: the product's clients back those off by milliseconds as well (only throttles take the
    // 1 s base and wake the adaptive limiter), so their attempts are counted without waiting seconds.
    const productAttempts = (await retries(product, '500')).map((r) => r.attempts);

    expect(throttled.map((r) => r.attempts)).toEqual(productAttempts);
    // The scripts above ("throttled on every SDK attempt") are written for DynamoDB's 4.
    expect(productAttempts).toEqual([4, 3, 3]);
    for (const { delayMs } of throttled) expect(delayMs).toBeLessThanOrEqual(100);
  });
});

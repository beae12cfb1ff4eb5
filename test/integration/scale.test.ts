import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type {
  FinalizeHandler,
  FinalizeHandlerArguments,
  FinalizeRequestMiddleware,
  HandlerExecutionContext,
  MiddlewareStack,
} from '@smithy/types';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients } from '../support/aws.ts';
import { s3Notification } from '../support/events.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';

const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness(batchSize: number, batchingWindowMs?: number) {
  const clients = testClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, {
    config: { tables: [{ name: 'events', prefix: 'events/' }], leaseSeconds: 300 },
    batchSize,
    batchingWindowMs,
    visibilityTimeout: 300,
    // Events are sent straight to the queue; no S3 TestEvent in the counts.
    notifications: false,
  });
}

/** Sends `files` events, `perMessage` records per message, 10 messages per SendMessageBatch. */
async function sendEvents(h: PipelineHarness, files: readonly string[], perMessage: number): Promise<void> {
  const bodies: string[] = [];
  for (let i = 0; i < files.length; i += perMessage) {
    bodies.push(
      s3Notification(
        ...files
          .slice(i, i + perMessage)
          .map((key) => ({ bucket: h.resources.landingBucket, key, size: 1000 })),
      ),
    );
  }
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < bodies.length; i += 10) {
    sends.push(
      h.clients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: h.resources.ingestQueue.url,
          Entries: bodies.slice(i, i + 10).map((MessageBody, j) => ({ Id: String(j), MessageBody })),
        }),
      ),
    );
  }
  await Promise.all(sends);
}

const keys = (n: number, pad = '') =>
  Array.from({ length: n }, (_, i) => `events/2026/11/29/${pad}part-${String(i).padStart(5, '0')}.json`);

/** How many requests `client` sends with `Expect: 100-continue`, by command, seen as they go out. */
function expectContinueRequests<I extends object, O extends object>(client: {
  middlewareStack: MiddlewareStack<I, O>;
}): Map<string, number> {
  const seen = new Map<string, number>();
  client.middlewareStack.add(
    ((next: FinalizeHandler<I, O>, context: HandlerExecutionContext) =>
      async (args: FinalizeHandlerArguments<I>) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
        if (headers.Expect === '100-continue') {
          const name = (context as { commandName?: string }).commandName ?? 'Unknown';
          seen.set(name, (seen.get(name) ?? 0) + 1);
        }
        return next(args);
      }) as FinalizeRequestMiddleware<I, O>,
    { step: 'finalizeRequest', name: 'expectContinueWitness' },
  );
  return seen;
}

describe('scale and cost', () => {
  // The 10,000-file invocation itself runs in memory (test/unit/ingestion/scale.test.ts): it is the use cases' proof.
  // This is the adapters' share of that path on the emulator, at a size that crosses their limits: 100
  // messages of 10 records in one invocation (10 receives and 10 DeleteMessageBatch of 10), 1,000 claims
  // through the claim concurrency of 64, and keys of ~950 bytes (S3 allows 1,024) so that the manifest is over
  // 2 MiB, as a 10,000-file one is: the S3 client sends such a PutObject with `Expect: 100-continue` and waits
  // for the emulator's interim answer, which smaller bodies never do.
  it('one invocation claims, stages and commits a 1,000-file batch of 10-record messages, with a manifest over 2 MiB', async () => {
    const h = await harness(100, 60_000);
    const expectContinue = expectContinueRequests(h.clientsOf('Committer').s3);
    const files = keys(1_000, `${'long-directory-name/'.repeat(46)}`);
    expect(files[0]?.length).toBeGreaterThan(950);
    await sendEvents(h, files, 10);
    const run = await h.pollIngest();
    expect(run).toMatchObject({ received: 100, failed: 0, crashed: false });
    expect(h.metrics.totals.get('FilesClaimed')).toBe(1_000);
    await h.runUntilQuiet(120_000);

    const verdict = await h.verify(files.map((key) => ({ table: 'events', key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    expect(verdict.versions.events).toEqual([1]);
    const [manifest] = await h.manifests('events');
    expect(manifest).toMatchObject({ fileCount: 1_000, bytes: 1_000_000 });
    expect(manifest?.batchIds).toHaveLength(1);
    expect(manifest?.entries).toHaveLength(1_000);
    expect(JSON.stringify(manifest).length).toBeGreaterThan(2 * 1024 * 1024);
    expect(expectContinue.get('PutObjectCommand')).toBeGreaterThanOrEqual(1);
  }, 240_000);

  it('costs one DynamoDB write per file plus a small constant per batch, and no per-file reads', async () => {
    // 500 files, one per message, in invocations of 50: one more write, read or SQS request per file (or per
    // message) would be 500 more, past every bound below (560 writes, 50 reads, 500 SQS requests), while the
    // per-batch constants stay small against the 50 files of a batch.
    const h = await harness(50);
    const files = keys(500);
    await sendEvents(h, files, 1);
    h.counter.reset();
    await h.runUntilQuiet(120_000);

    const verdict = await h.verify(files.map((key) => ({ table: 'events', key })));
    expect(verdict).toMatchObject(CLEAN_VERDICT);
    const batches = verdict.versions.events?.length ?? 0;
    expect(batches).toBeGreaterThanOrEqual(10);
    // Per batch: seal 1, reserve 2 (update + condition check), finalize 2, mark published 1.
    const perBatch = 6;
    expect(h.counter.dynamodbWriteItems).toBeLessThanOrEqual(files.length + perBatch * batches);
    expect(h.counter.requests.get('dynamodb.PutItem')).toBe(files.length + batches);
    // Reads: the committer's batch/table look-ups, and the harness's own quiet checks; never per file.
    expect(h.counter.dynamodbReadItems).toBeLessThan(files.length / 10);
    const sqs = h.counter.total('sqs.');
    expect(sqs).toBeLessThan(files.length);
  }, 240_000);
});

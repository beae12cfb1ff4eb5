import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../shared/aws/clients.ts';
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
  for (let i = 0; i < bodies.length; i += 10) {
    await h.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: h.resources.ingestQueue.url,
        Entries: bodies.slice(i, i + 10).map((MessageBody, j) => ({ Id: String(j), MessageBody })),
      }),
    );
  }
}

const keys = (n: number) =>
  Array.from({ length: n }, (_, i) => `events/2026/11/29/part-${String(i).padStart(5, '0')}.json`);

describe('scale and cost', () => {
  it('one invocation claims, stages and commits a 10,000-file batch', async () => {
    // BatchSize counts messages: 1,000 messages of 10 records each, gathered into one invocation.
    const h = await harness(1_000, 120_000);
    const files = keys(10_000);
    await sendEvents(h, files, 10);
    const run = await h.pollIngest();
    expect(run).toMatchObject({ received: 1000, failed: 0, crashed: false });
    expect(h.metrics.totals.get('FilesClaimed')).toBe(10_000);
    await h.runUntilQuiet(120_000);

    const verdict = await h.verify(files.map((key) => ({ table: 'events', key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT });
    expect(verdict.versions.events).toEqual([1]);
    const [manifest] = await h.manifests('events');
    expect(manifest).toMatchObject({ fileCount: 10_000, bytes: 10_000_000 });
    expect(manifest?.entries).toHaveLength(10_000);
  }, 240_000);

  it('costs one DynamoDB write per file plus a small constant per batch, and no per-file reads', async () => {
    const h = await harness(100);
    const files = keys(1_000);
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

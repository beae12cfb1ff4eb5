import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { pollOnce } from '../../local/poller.ts';
import { destroyClients } from '../../shared/aws/clients.ts';
import { backfillRecord } from '../../shared/backfill/sqs-enqueuer.ts';
import { UnknownOutcomeError } from '../../shared/errors.ts';
import { makeBatcherHandler } from '../../shared/handlers/batcher-handler.ts';
import { MemoryMetrics } from '../../shared/metrics.ts';
import { CommitBatch } from '../../shared/usecases/commit-batch.ts';
import { testClients } from '../support/aws.ts';
import { s3Notification } from '../support/events.ts';
import { Gate } from '../support/gate.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';

const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness(leaseSeconds = 2) {
  const clients = testClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, {
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds },
  });
}

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const expectedOf = (list: readonly string[]) => list.map((key) => ({ table: 'orders', key }));
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };

function sqsEvent(bodies: readonly string[], tag: string): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `${tag}-${i}`,
      receiptHandle: `${tag}-${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:ingest',
      awsRegion: 'us-east-1',
    })),
  };
}

describe('protocol under races and crashes', () => {
  it('two batchers racing over overlapping events claim each file exactly once', async () => {
    const h = await harness();
    const bucket = h.resources.landingBucket;
    const files = keys(30);
    const bodyOf = (key: string) => s3Notification({ bucket, key });
    // A gets files 0-19, B gets 10-29: ten files both see at the same moment.
    const a = h.batcher()(sqsEvent(files.slice(0, 20).map(bodyOf), 'a'));
    const b = h.batcher()(sqsEvent(files.slice(10).map(bodyOf), 'b'));
    const [ra, rb] = await Promise.all([a, b]);
    // Whatever either had to give back, SQS would deliver again.
    const failedBodies = [
      ...ra.batchItemFailures.map((f) => bodyOf(files[Number(f.itemIdentifier.split('-')[1])] as string)),
      ...rb.batchItemFailures.map((f) =>
        bodyOf(files[10 + Number(f.itemIdentifier.split('-')[1])] as string),
      ),
    ];
    for (const body of failedBodies) await h.sendEvent(body);
    await h.runUntilQuiet();

    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    expect(h.metrics.totals.get('DuplicatesDropped') ?? 0).toBeGreaterThan(0);
  });

  it('a stalled batcher whose lease expired is fenced: the takeover wins, the zombie cannot seal', async () => {
    const h = await harness(1);
    const bucket = h.resources.landingBucket;
    const files = keys(5);
    const event = sqsEvent(
      files.map((key) => s3Notification({ bucket, key })),
      'z',
    );
    // The zombie claims everything, then stalls before staging its list.
    const gate = new Gate();
    const ports = h.ports();
    const zombie = makeBatcherHandler({
      ...ports,
      store: gate.wrap(ports.store, 'putStagedList'),
      config: h.config,
      log: h.log,
      metrics: new MemoryMetrics(),
      now: h.now,
    });
    const zombieRun = zombie(event);
    await gate.arrived;
    // Meanwhile its lease runs out and SQS delivers the same events to a healthy batcher.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const rescue = await h.batcher()(
      sqsEvent(
        files.map((key) => s3Notification({ bucket, key })),
        'r',
      ),
    );
    expect(rescue.batchItemFailures).toEqual([]);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBe(5);
    // The zombie wakes up, stages, tries to seal: fenced, so it gives every record back.
    gate.open();
    const zombieResult = await zombieRun;
    expect(zombieResult.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      files.map((_, i) => `z-${i}`),
    );
    expect(h.logs.some((l) => l.message.startsWith('batch fenced'))).toBe(true);
    // Its records come back and find the files in the rescuer's sealed batch.
    for (const key of files) await h.sendEvent(s3Notification({ bucket, key }));
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });

  it('a claim left by a batcher that died is taken over after its lease, not before', async () => {
    const h = await harness(2);
    const files = keys(4);
    for (const key of files) await h.put(key);
    // Dies right after its last claim: no staging, no seal, nothing deleted.
    const crashed = await h.pollIngest({ point: 'ledger.claimFile', occurrence: 4 });
    expect(crashed.crashed).toBe(true);
    // Redelivered while the lease is live: busy, given back to SQS.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const early = await h.pollIngest();
    expect(early.failed).toBeGreaterThan(0);
    expect(h.metrics.totals.get('ClaimsBusy')).toBeGreaterThan(0);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBe(4);
  });

  /** A batcher whose ledger applies every claim but reports `UnknownOutcomeError` for the chosen calls. */
  function lossyClaims(h: Awaited<ReturnType<typeof harness>>, lose: (call: number, key: string) => boolean) {
    const ports = h.ports();
    let calls = 0;
    const flaky = new Proxy(ports.ledger, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'claimFile') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<typeof target.claimFile>) => {
          const result = await target.claimFile(...args);
          calls += 1;
          if (lose(calls, args[0].key))
            throw new UnknownOutcomeError('claim file failed: TimeoutError: socket hang up');
          return result;
        };
      },
    });
    return makeBatcherHandler({
      ...ports,
      ledger: flaky,
      config: h.config,
      log: h.log,
      metrics: h.metrics,
      now: h.now,
    });
  }

  it('a claim whose response was lost once is re-issued and found ours: the batch seals whole', async () => {
    const h = await harness(1);
    const files = keys(4);
    for (const key of files) await h.put(key);
    const handler = lossyClaims(h, (call) => call === 2);
    const result = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.ingestQueue.url, batchSize: 10 },
      handler,
    );
    expect(result.failed).toBe(0);
    const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    expect(sealed?.fileCount).toBe(files.length);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
  });

  it('a claim whose outcome stays unknown keeps the whole batch unsealed, fenced so redelivery takes over at once', async () => {
    const h = await harness(60);
    const files = keys(4);
    for (const key of files) await h.put(key);
    const handler = lossyClaims(h, (_, key) => key === files[1]);
    const result = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.ingestQueue.url, batchSize: 10 },
      handler,
    );
    // Every record that routed a file is given back; nothing was sealed; the batch fenced itself.
    expect(result.failed).toBe(files.length);
    expect(await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect(h.logs.some((l) => l.message.startsWith('claim outcome unknown'))).toBe(true);
    const owner = await h.ledger.getFile(
      'orders',
      (await h.ledger.scanFiles({ table: 'orders' }))[0]?.identity ?? '',
    );
    expect((await h.ledger.getBatch('orders', owner?.batchId ?? ''))?.state).toBe('ABORTED');
    // The lease is 60 s, yet the next invocation takes the files over: the fence freed them.
    await h.runUntilQuiet(30_000);
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBeGreaterThanOrEqual(files.length - 1);
  });

  it('a backfill record for a table that was removed meanwhile is quarantined with its reason, not dropped', async () => {
    const h = await harness();
    const object = {
      bucket: h.resources.landingBucket,
      key: 'orders/old.json',
      size: 3,
      eTag: 'e1',
      versionId: null,
      sequencer: null,
      eventTime: new Date().toISOString(),
    };
    await h.sendEvent(
      JSON.stringify({ Records: [backfillRecord(object, { table: 'orders_old', run: 'r1' })] }),
    );
    await h.runUntilQuiet();
    const quarantined = await h.ledger.listQuarantine([new Date().toISOString().slice(0, 10)]);
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]?.reason).toMatch(/table 'orders_old', which is not configured/);
    expect(quarantined[0]?.body).toContain('orders/old.json');
    expect(await h.verify([])).toMatchObject(clean);
  });

  it('a sealed batch whose commit request was lost is committed by redelivery, or by the sweeper', async () => {
    const h = await harness();
    const first = keys(3, 'orders/a');
    for (const key of first) await h.put(key);
    // Crash after sealing, before the commit request: the redelivered events re-send it.
    expect((await h.pollIngest({ point: 'commitQueue.requestCommit', when: 'before' })).crashed).toBe(true);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(first))).toMatchObject(clean);

    // Same crash, but the events never come back (say, an operator purged the queue): the sweeper.
    const second = keys(3, 'orders/b');
    for (const key of second) await h.put(key);
    expect((await h.pollIngest({ point: 'commitQueue.requestCommit', when: 'before' })).crashed).toBe(true);
    await h.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: h.resources.ingestQueue.url }));
    expect(await h.ledgerQuiet()).toBe(false);
    expect(await h.sweep(0)).toMatchObject({ resent: 1, stalePending: 0 });
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf([...first, ...second]))).toMatchObject(clean);
  });

  it('a version reserved by a committer that died is finished by the next commit, before its own', async () => {
    const h = await harness();
    const first = keys(2, 'orders/a');
    for (const key of first) await h.put(key);
    await h.pollIngest();
    // The committer reserves v1 and dies before writing the manifest.
    expect((await h.pollCommit({ point: 'ledger.reserveVersion' })).crashed).toBe(true);
    expect((await h.ledger.getTable('orders')).pending?.version).toBe(1);

    // A second batch's commit runs first (the crashed request is still invisible).
    const second = keys(2, 'orders/b');
    for (const key of second) await h.put(key);
    await h.pollIngest();
    const pending = (await h.ledger.getTable('orders')).pending;
    const sealed = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
    const secondBatch = sealed.find((b) => b.batchId !== pending?.batchId);
    if (!secondBatch) throw new Error('second batch was not sealed');
    const committer = new CommitBatch({ ...h.ports(), log: h.log, now: h.now });
    const outcome = await committer.commit('orders', secondBatch.batchId);
    expect(outcome).toMatchObject({ result: 'committed', version: 2, finishedPending: [1] });
    // The crashed request comes back later and finds its batch committed.
    await h.runUntilQuiet();

    const verdict = await h.verify(expectedOf([...first, ...second]));
    expect(verdict).toMatchObject(clean);
    expect(verdict.versions.orders).toEqual([1, 2]);
    const [v1] = await h.manifests('orders');
    expect(v1?.files.map((f) => f.key)).toEqual(first);
  });
});

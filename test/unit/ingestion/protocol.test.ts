// The protocol's races and crashes, with the real handlers on the in-memory fakes and the simulated clock
// (test/support/memory-harness.ts): no emulator, no real waiting. The fakes are held to the adapters'
// behaviour by test/contract; the crash matrix's moto smoke still crosses the adapters end to end.
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { backfillRecord } from '../../../shared/backfill/aws/sqs-enqueuer.ts';
import { makeBatcherHandler } from '../../../shared/ingestion/batcher-handler.ts';
import { CommitBatch } from '../../../shared/ingestion/commit-batch.ts';
import { UnknownOutcomeError } from '../../../shared/kernel/errors.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { s3Notification, sqsRecord } from '../../support/events.ts';
import { Gate } from '../../support/gate.ts';
import { CLEAN_VERDICT } from '../../support/harness.ts';
import { MemoryHarness } from '../../support/memory-harness.ts';

function harness(leaseSeconds = 2) {
  return MemoryHarness.create({ config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds } });
}

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const expectedOf = (list: readonly string[]) => list.map((key) => ({ table: 'orders', key }));
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };
const today = (h: MemoryHarness) => new Date(h.now()).toISOString().slice(0, 10);

/** An SQS event built by hand, for invocations the test runs side by side. */
function sqsEvent(h: MemoryHarness, bodies: readonly string[], tag: string): SQSEvent {
  return {
    Records: bodies.map((body, i) =>
      sqsRecord({
        messageId: `${tag}-${i}`,
        receiptHandle: `${tag}-${i}`,
        body,
        queue: 'ingest',
        sentAt: h.now(),
      }),
    ),
  };
}

describe('protocol under races and crashes', () => {
  it('two batchers racing over overlapping events claim each file exactly once', async () => {
    const h = await harness();
    const files = keys(30);
    const bodyOf = (key: string) => s3Notification({ bucket: h.landingBucket, key });
    // A gets files 0-19, B gets 10-29: ten files both see at the same moment.
    const [ra, rb] = await Promise.all([
      h.batcher()(sqsEvent(h, files.slice(0, 20).map(bodyOf), 'a')),
      h.batcher()(sqsEvent(h, files.slice(10).map(bodyOf), 'b')),
    ]);
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
    // The race really happened: the loser of some claim met the winner's claim.
    expect(
      (h.metrics.totals.get('DuplicatesDropped') ?? 0) + (h.metrics.totals.get('ClaimsBusy') ?? 0),
    ).toBeGreaterThan(0);
  });

  it('a stalled batcher whose lease expired is fenced: the takeover wins, the zombie cannot seal', async () => {
    const h = await harness(1);
    const files = keys(5);
    const event = (tag: string) =>
      sqsEvent(
        h,
        files.map((key) => s3Notification({ bucket: h.landingBucket, key })),
        tag,
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
      ...h.clock(),
    });
    const zombieRun = zombie(event('z'));
    await h.run(gate.arrived);
    // Meanwhile its lease runs out and SQS delivers the same events to a healthy batcher.
    await h.advance(1_200);
    const rescue = await h.batcher()(event('r'));
    expect(rescue.batchItemFailures).toEqual([]);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBe(5);
    // The zombie wakes up, stages, tries to seal: fenced, so it gives every record back.
    gate.open();
    const zombieResult = await h.run(zombieRun);
    expect(zombieResult.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      files.map((_, i) => `z-${i}`),
    );
    expect(h.logs.some((l) => l.message.startsWith('batch fenced'))).toBe(true);
    // Its records come back and find the files in the rescuer's sealed batch.
    for (const key of files) await h.sendEvent(s3Notification({ bucket: h.landingBucket, key }));
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
    // Redelivered (visibility 1 s) while the lease (2 s) is live: busy, given back to SQS.
    await h.advance(1_100);
    const early = await h.pollIngest();
    expect(early.received).toBe(files.length);
    expect(early.failed).toBe(files.length);
    expect(h.metrics.totals.get('ClaimsBusy')).toBe(files.length);
    expect(h.metrics.totals.get('ClaimTakeovers') ?? 0).toBe(0);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBe(4);
  });

  /** A batcher whose ledger applies every claim but reports `UnknownOutcomeError` for the chosen calls. */
  function lossyClaims(h: MemoryHarness, lose: (call: number, key: string) => boolean) {
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
      ...h.clock(),
    });
  }

  it('a claim whose response was lost once is re-issued and found ours: the batch seals whole', async () => {
    const h = await harness(1);
    const files = keys(4);
    for (const key of files) await h.put(key);
    const result = await h.pollIngestWith(lossyClaims(h, (call) => call === 2));
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
    const result = await h.pollIngestWith(lossyClaims(h, (_, key) => key === files[1]));
    // Every record that routed a file is given back; nothing was sealed; the batch fenced itself.
    expect(result.failed).toBe(files.length);
    expect(await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect(h.logs.some((l) => l.message.startsWith('claim outcome unknown'))).toBe(true);
    const [claim] = await h.ledger.scanFiles({ table: 'orders' });
    const owner = await h.ledger.getFile('orders', claim?.identity ?? '');
    expect((await h.ledger.getBatch('orders', owner?.batchId ?? ''))?.state).toBe('ABORTED');
    // The lease is 60 s, yet the next invocations take the files over within 30 s: the fence freed them.
    const started = h.now();
    await h.runUntilQuiet(30_000);
    expect(h.now() - started).toBeLessThan(60_000);
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    expect(h.metrics.totals.get('ClaimTakeovers')).toBeGreaterThanOrEqual(files.length - 1);
  });

  it('a backfill record for a table that was removed meanwhile is quarantined with its reason, not dropped', async () => {
    const h = await harness();
    const object = {
      bucket: h.landingBucket,
      key: 'orders/old.json',
      size: 3,
      eTag: 'e1',
      versionId: null,
      sequencer: null,
      eventTime: new Date(h.now()).toISOString(),
    };
    await h.sendEvent(
      JSON.stringify({ Records: [backfillRecord(object, { table: 'orders_old', run: 'r1' })] }),
    );
    await h.runUntilQuiet();
    const quarantined = await h.ledger.listQuarantine([today(h)]);
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
    h.purgeIngest();
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
    const committer = new CommitBatch({ ...h.ports(), log: h.log, ...h.clock() });
    const outcome = await h.run(committer.commit('orders', secondBatch.batchId));
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

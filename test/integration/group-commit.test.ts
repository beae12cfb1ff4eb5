import { afterAll, describe, expect, it } from 'vitest';
import { type AwsClients, destroyClients } from '../../local/aws/clients.ts';
import { CommitBatch } from '../../shared/ingestion/commit-batch.ts';
import { DEFAULT_GROUP_LIMITS, type GroupLimits } from '../../shared/ingestion/commit-group.ts';
import { reservedBatchIds } from '../../shared/ingestion/ledger.ts';
import { stagedListKey } from '../../shared/ingestion/manifest.ts';
import { testClients } from '../support/aws.ts';
import { FaultInjector, SimulatedCrash } from '../support/faults.ts';
import { PipelineHarness } from '../support/harness.ts';
import { sealBatchDirectly } from '../support/seal.ts';

const clientSets: AwsClients[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness() {
  const clients = testClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, {
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds: 2 },
  });
}

/** `count` sealed batches of `files` files each, oldest first. */
async function sealed(h: PipelineHarness, count: number, files = 3, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + count; i++)
    ids.push(
      await sealBatchDirectly(h.ports('Batcher'), {
        table: 'orders',
        bucket: h.resources.landingBucket,
        index: i,
        files,
      }),
    );
  return ids;
}

const expected = (batches: number, files = 3, from = 0) =>
  Array.from({ length: batches }, (_, b) =>
    Array.from({ length: files }, (_, f) => ({ table: 'orders', key: `orders/b${b + from}/f${f}.json` })),
  ).flat();

function committer(h: PipelineHarness, options: { group?: GroupLimits; injector?: FaultInjector } = {}) {
  return new CommitBatch({
    ...h.ports('Committer', options.injector),
    log: h.log,
    ...h.clock(),
    group: options.group,
  });
}

async function stagedListExists(h: PipelineHarness, batchId: string): Promise<boolean> {
  try {
    await h.store.getStagedList(stagedListKey('orders', batchId));
    return true;
  } catch {
    return false;
  }
}

describe('group commit', () => {
  it('commits every waiting SEALED batch of a table in one version', async () => {
    const h = await harness();
    const ids = await sealed(h, 5);

    const outcome = await committer(h).commit('orders', ids[2] as string);

    expect(outcome).toMatchObject({ result: 'committed', version: 1, files: 15 });
    // The requested batch first, then the others in seal order.
    expect(outcome.batchIds).toEqual([ids[2], ids[0], ids[1], ids[3], ids[4]]);
    const [manifest] = await h.manifests('orders');
    expect(manifest?.batchIds).toEqual(outcome.batchIds);
    for (const id of ids) {
      expect(await h.ledger.getBatch('orders', id)).toMatchObject({ state: 'COMMITTED', version: 1 });
      expect(await stagedListExists(h, id)).toBe(false);
    }
    expect(await h.ledger.getTable('orders')).toMatchObject({ head: 1, files: 15 });
    expect(await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect(h.published).toHaveLength(1);
    expect(h.published[0]).toMatchObject({ version: 1, files: 15, batchIds: outcome.batchIds });
    expect(await h.verify(expected(5))).toMatchObject({ lost: [], duplicated: [], contiguous: true });
  });

  it('keeps a version within the file bound, and maxBatches 1 commits one batch per version', async () => {
    const h = await harness();
    const ids = await sealed(h, 5);

    const bounded = await committer(h, { group: { ...DEFAULT_GROUP_LIMITS, maxFiles: 7 } }).commit(
      'orders',
      ids[0] as string,
    );
    const single = await committer(h, { group: { ...DEFAULT_GROUP_LIMITS, maxBatches: 1 } }).commit(
      'orders',
      ids[2] as string,
    );

    expect(bounded.batchIds).toEqual([ids[0], ids[1]]);
    expect(single).toMatchObject({ version: 2, batchIds: [ids[2]], files: 3 });
    expect((await h.manifests('orders')).map((m) => m.fileCount)).toEqual([6, 3]);
  });

  it('a request for a batch already committed in a group is a no-op', async () => {
    const h = await harness();
    const ids = await sealed(h, 4);
    await committer(h).commit('orders', ids[0] as string);
    const eventsBefore = h.published.length;

    const again = await committer(h).commit('orders', ids[3] as string);

    expect(again).toMatchObject({ result: 'already-committed', version: 1, published: true });
    expect(await h.ledger.getTable('orders')).toMatchObject({ head: 1, files: 12 });
    expect(await h.manifests('orders')).toHaveLength(1);
    expect(h.published).toHaveLength(eventsBefore);
  });

  it('its queued requests are acknowledged as no-ops through the handler', async () => {
    const h = await harness();
    const ids = await sealed(h, 6);
    for (const id of ids) await h.ports('Batcher').commitQueue.requestCommit('orders', id);

    await h.runUntilQuiet();

    expect((await h.manifests('orders')).map((m) => m.batchIds.length)).toEqual([6]);
    expect(await h.verify(expected(6))).toMatchObject({ lost: [], duplicated: [], dlqDepth: 0 });
  });

  for (const crash of [
    { point: 'store.putManifestIfAbsent', when: 'before' },
    { point: 'store.putManifestIfAbsent', when: 'after' },
    { point: 'ledger.finalizeCommit', when: 'before' },
  ] as const) {
    it(`a committer that dies ${crash.when} ${crash.point} of a grouped version: the next one finishes it`, async () => {
      const h = await harness();
      const ids = await sealed(h, 4);
      const injector = new FaultInjector({ point: crash.point, when: crash.when });
      await expect(committer(h, { injector }).commit('orders', ids[0] as string)).rejects.toBeInstanceOf(
        SimulatedCrash,
      );
      const left = (await h.ledger.getTable('orders')).pending;
      expect(left && reservedBatchIds(left)).toEqual(ids);
      // A batch sealed after the crash, whose request comes first: the reserved group must go before it.
      const [late] = await sealed(h, 1, 3, 4);

      const outcome = await committer(h).commit('orders', late as string);

      expect(outcome).toMatchObject({
        result: 'committed',
        version: 2,
        finishedPending: [1],
        batchIds: [late],
      });
      const manifests = await h.manifests('orders');
      expect(manifests.map((m) => m.batchIds)).toEqual([ids, [late]]);
      expect(manifests[0]?.committedAt).toBe(left?.reservedAt);
      for (const id of ids) expect(await h.ledger.getBatch('orders', id)).toMatchObject({ version: 1 });
      expect(await h.verify(expected(5))).toMatchObject({ lost: [], duplicated: [], headsMatch: true });
    });
  }

  it('a request for a member of a reserved group resumes that reservation', async () => {
    const h = await harness();
    const ids = await sealed(h, 3);
    const injector = new FaultInjector({ point: 'ledger.finalizeCommit', when: 'before' });
    await expect(committer(h, { injector }).commit('orders', ids[0] as string)).rejects.toThrow();

    const outcome = await committer(h).commit('orders', ids[2] as string);

    expect(outcome).toMatchObject({ result: 'committed', version: 1, finishedPending: [], batchIds: ids });
    expect(await h.verify(expected(3))).toMatchObject({ lost: [], duplicated: [], headsMatch: true });
  });
});

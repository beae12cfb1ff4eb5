/** What the BatchStore and CommitQueue ports promise, for the fakes and the S3/SQS adapters alike. */
import { describe, expect, it } from 'vitest';
import { StagedListMissingError } from '../../shared/kernel/errors.ts';
import { freshTable, manifest, stagedList, type TargetFactory } from './target.ts';

export function batchStoreContract(target: TargetFactory): void {
  describe('BatchStore contract', () => {
    it('staged list: put, get the same list back, delete; deleting a missing key succeeds', async () => {
      const t = await target();
      const list = stagedList(freshTable(), 'B1', ['a.csv', 'b.csv']);

      const key = await t.store.putStagedList(list);

      expect(await t.store.getStagedList(key)).toEqual(list);
      await t.store.deleteStagedList(key);
      await expect(t.store.getStagedList(key)).rejects.toBeInstanceOf(StagedListMissingError);
      await expect(t.store.deleteStagedList(key)).resolves.toBeUndefined();
    });

    it('putManifestIfAbsent: created once, then exists (never overwritten); getManifest reads it back', async () => {
      const t = await target();
      const table = freshTable();
      const first = manifest(table, 1, 'B1');

      expect(await t.store.getManifest(table, 1)).toBeUndefined();
      expect(await t.store.putManifestIfAbsent(first)).toBe('created');
      // A later writer of the same version (a second committer, a retry) must not replace it.
      expect(await t.store.putManifestIfAbsent(manifest(table, 1, 'B2'))).toBe('exists');

      expect(await t.store.getManifest(table, 1)).toEqual(first);
      expect(await t.store.listManifestVersions(table)).toEqual([1]);
    });
  });
}

export function commitQueueContract(target: TargetFactory): void {
  describe('CommitQueue contract', () => {
    it('requestCommit: one message per batch in the table group; a repeat within 5 minutes is dropped', async () => {
      const t = await target();
      const table = freshTable();

      await t.commitQueue.requestCommit(table, 'B1');
      await t.commitQueue.requestCommit(table, 'B1');
      await t.commitQueue.requestCommit(table, 'B2');

      const received = [...(await t.receiveCommits()), ...(await t.receiveCommits())];
      expect(received).toEqual([
        { body: JSON.stringify({ table, batchId: 'B1' }), group: table },
        { body: JSON.stringify({ table, batchId: 'B2' }), group: table },
      ]);
    });
  });
}

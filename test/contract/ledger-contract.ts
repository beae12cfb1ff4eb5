/**
 * What the Ledger port promises, written once and run against every implementation: the
 * simulation's verdicts are only worth something if its ledger answers as the DynamoDB adapter does.
 */
import { describe, expect, it } from 'vitest';
import type { SealRequest } from '../../shared/ingestion/ledger.ts';
import type { PendingVersion } from '../../shared/ingestion/model.ts';
import { type ContractTarget, fileRef, freshTable, type TargetFactory } from './target.ts';

const seal = (table: string, batchId: string, sealedAt = 1_000): SealRequest => ({
  table,
  batchId,
  fileCount: 2,
  bytes: 20,
  stagedKey: `_staging/${table}/${batchId}.json`,
  sealedAt,
  minEventTime: '2026-11-30T10:00:00.000Z',
});

const pending = (batchId: string, version: number): PendingVersion => ({
  version,
  batchId,
  reservedAt: `2026-11-30T10:00:0${version}.000Z`,
});

/** Sealed, reserved and finalized: the batch is COMMITTED as `version`. */
async function commit(t: ContractTarget, table: string, batchId: string, version: number) {
  await t.ledger.sealBatch(seal(table, batchId));
  expect(await t.ledger.reserveVersion(table, version - 1, pending(batchId, version))).toBe(true);
  expect(await t.ledger.finalizeCommit(table, pending(batchId, version), { files: 2, bytes: 20 })).toBe(
    'committed',
  );
}

export function ledgerContract(target: TargetFactory): void {
  describe('Ledger contract', () => {
    it('claimFile: the first claim wins; a second learns the owner and its lease from the failed put', async () => {
      const t = await target();
      const table = freshTable();
      const file = fileRef(table, 'a.csv');

      expect(await t.ledger.claimFile(file, 'B1', 5_000)).toEqual({ kind: 'claimed' });
      expect(await t.ledger.claimFile(file, 'B2', 9_000)).toEqual({
        kind: 'owned',
        owner: { batchId: 'B1', leaseUntil: 5_000 },
      });
      expect(await t.ledger.getFile(table, file.identity)).toEqual({
        table,
        identity: file.identity,
        batchId: 'B1',
        leaseUntil: 5_000,
      });
    });

    it('fenceBatch: an absent batch is fenced, ABORTED stays fenced (idempotent), a sealed one is live', async () => {
      const t = await target();
      const table = freshTable();

      expect(await t.ledger.fenceBatch(table, 'B1', 'B9')).toEqual({ kind: 'fenced' });
      expect(await t.ledger.fenceBatch(table, 'B1', 'B8')).toEqual({ kind: 'fenced' });
      expect((await t.ledger.getBatch(table, 'B1'))?.state).toBe('ABORTED');

      await t.ledger.sealBatch(seal(table, 'B2'));
      const live = await t.ledger.fenceBatch(table, 'B2', 'B9');
      expect(live.kind).toBe('batch-live');
      expect(live.kind === 'batch-live' && live.batch).toMatchObject({ batchId: 'B2', state: 'SEALED' });
    });

    it('moveFile: moves a file off the fenced batch once; a second mover learns the new owner', async () => {
      const t = await target();
      const table = freshTable();
      const file = fileRef(table, 'a.csv');
      await t.ledger.claimFile(file, 'B1', 5_000);
      await t.ledger.fenceBatch(table, 'B1', 'B2');

      expect(await t.ledger.moveFile(file, 'B1', 'B2', 7_000)).toEqual({ kind: 'moved' });
      expect(await t.ledger.moveFile(file, 'B1', 'B3', 8_000)).toEqual({
        kind: 'owned',
        owner: { batchId: 'B2', leaseUntil: 7_000 },
      });
      expect(await t.ledger.getFile(table, file.identity)).toMatchObject({
        batchId: 'B2',
        leaseUntil: 7_000,
      });
    });

    it('sealBatch: seals once, a retry of our own seal is sealed too, a fenced batch is refused', async () => {
      const t = await target();
      const table = freshTable();

      expect(await t.ledger.sealBatch(seal(table, 'B1'))).toEqual({ kind: 'sealed' });
      expect(await t.ledger.sealBatch(seal(table, 'B1'))).toEqual({ kind: 'sealed' });
      await t.ledger.fenceBatch(table, 'B2', 'B9');
      expect(await t.ledger.sealBatch(seal(table, 'B2'))).toEqual({ kind: 'fenced', state: 'ABORTED' });
      // Exactly the record's fields: no key attributes or index attributes leak into it.
      expect(await t.ledger.getBatch(table, 'B1')).toEqual({ ...seal(table, 'B1'), state: 'SEALED' });
    });

    it('reserveVersion + finalizeCommit: one reservation at a time, only for a SEALED batch; finalize once', async () => {
      const t = await target();
      const table = freshTable();
      await t.ledger.sealBatch(seal(table, 'B1'));
      await t.ledger.sealBatch(seal(table, 'B2'));
      await t.ledger.fenceBatch(table, 'B3', 'B9');
      expect(await t.ledger.getTable(table)).toMatchObject({ head: 0, pending: undefined, files: 0 });

      expect(await t.ledger.reserveVersion(table, 0, pending('B3', 1))).toBe(false);
      expect(await t.ledger.reserveVersion(table, 1, pending('B1', 2))).toBe(false);
      expect(await t.ledger.reserveVersion(table, 0, pending('B1', 1))).toBe(true);
      expect(await t.ledger.reserveVersion(table, 0, pending('B2', 1))).toBe(false);
      expect((await t.ledger.getTable(table)).pending).toEqual(pending('B1', 1));

      expect(await t.ledger.finalizeCommit(table, pending('B1', 1), { files: 2, bytes: 20 })).toBe(
        'committed',
      );
      expect(await t.ledger.finalizeCommit(table, pending('B1', 1), { files: 2, bytes: 20 })).toBe(
        'already-committed',
      );
      const after = await t.ledger.getTable(table);
      expect(after).toMatchObject({ table, head: 1, files: 2, bytes: 20, lastBatchId: 'B1' });
      expect(after.pending).toBeUndefined();
      expect(after.lastCommitAt).toEqual(expect.any(String));
      expect(await t.ledger.getBatch(table, 'B1')).toMatchObject({
        state: 'COMMITTED',
        version: 1,
        committedAt: pending('B1', 1).reservedAt,
      });
      // A COMMITTED batch cannot be reserved again (a redelivered commit request).
      expect(await t.ledger.reserveVersion(table, 1, pending('B1', 2))).toBe(false);
    });

    it('markPublished: only a COMMITTED batch, which then leaves the sealed index', async () => {
      const t = await target();
      const table = freshTable();
      await t.ledger.sealBatch(seal(table, 'B1'));
      await expect(t.ledger.markPublished(table, 'B1', '2026-11-30T11:00:00.000Z')).rejects.toThrow();
      await commit(t, table, 'B1', 1);

      await t.ledger.markPublished(table, 'B1', '2026-11-30T11:00:00.000Z');

      expect(await t.ledger.getBatch(table, 'B1')).toMatchObject({
        state: 'COMMITTED',
        publishedAt: '2026-11-30T11:00:00.000Z',
      });
      expect(await t.ledger.listSealedBatches(table, Number.MAX_SAFE_INTEGER)).toEqual([]);
    });

    it('sealed index: SEALED and unpublished COMMITTED batches of the table sealed before the cut, oldest first', async () => {
      const t = await target();
      const table = freshTable();
      const other = freshTable();
      await t.ledger.sealBatch(seal(table, 'B3', 3_000));
      await t.ledger.sealBatch(seal(table, 'B1', 1_000));
      await t.ledger.sealBatch(seal(table, 'B2', 2_000));
      await t.ledger.sealBatch(seal(table, 'B9', 9_000));
      await t.ledger.sealBatch(seal(other, 'B0', 500));
      await t.ledger.fenceBatch(table, 'B4', 'B9');
      // Committed but not yet published: the sweeper must still find it to publish it.
      await t.ledger.reserveVersion(table, 0, pending('B2', 1));
      await t.ledger.finalizeCommit(table, pending('B2', 1), { files: 2, bytes: 20 });

      const listed = await t.ledger.listSealedBatches(table, 5_000);

      expect(listed.map((b) => [b.batchId, b.state])).toEqual([
        ['B1', 'SEALED'],
        ['B2', 'COMMITTED'],
        ['B3', 'SEALED'],
      ]);
      const scanned = await t.ledger.scanSealedIndex({});
      const ours = scanned.batches.filter((b) => b.table === table || b.table === other);
      expect(ours.map((b) => b.batchId).sort()).toEqual(['B0', 'B1', 'B2', 'B3', 'B9']);
    });

    it('quarantine: an entry is listed under the day of its sentAt, whatever shard its id hashes to', async () => {
      const t = await target();
      const id = `${freshTable()}#0`;
      const entry = {
        id,
        reason: 'not an S3 event',
        sentAt: '2026-11-30T10:00:00.000Z',
        source: 'ingest',
        body: '{"not": "an s3 event"}',
      };
      await t.ledger.quarantine(entry);

      const listed = await t.ledger.listQuarantine(['2026-11-30']);

      expect(listed.filter((e) => e.id === id)).toEqual([entry]);
      expect(await t.ledger.listQuarantine(['2026-11-29'])).not.toContainEqual(entry);
    });
  });
}

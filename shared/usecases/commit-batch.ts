import { BatchNotSealedError, InletError, ManifestConflictError } from '../errors.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';
import { buildManifest, manifestKey } from '../manifest.ts';
import type { BatchRecord, PendingVersion } from '../model.ts';
import type { BatchStore, EventPublisher } from '../storage/batch-store.ts';

export interface CommitDeps {
  readonly ledger: Ledger;
  readonly store: BatchStore;
  readonly events: EventPublisher;
  readonly log: Log;
  /** epoch ms */
  readonly now: () => number;
}

export interface CommitOutcome {
  readonly table: string;
  readonly batchId: string;
  /** 'committed' now, or it already was (a duplicate request). */
  readonly result: 'committed' | 'already-committed';
  readonly version: number;
  readonly files: number;
  readonly bytes: number;
  readonly minEventTime?: string;
  /** Versions of other batches this call had to finish first (left reserved by a crashed committer). */
  readonly finishedPending: number[];
}

const MAX_RESERVE_ATTEMPTS = 5;

/**
 * The committer (docs/protocol.md, C1-C5). Runs one table at a time (FIFO group = table), but is safe if
 * two run at once: the reservation is a conditional write, the manifest a conditional put, the final step a
 * conditional transaction.
 */
export class CommitBatch {
  constructor(private readonly deps: CommitDeps) {}

  async commit(table: string, batchId: string): Promise<CommitOutcome> {
    const { ledger } = this.deps;
    const finishedPending: number[] = [];
    // C1. Nothing to do if done; refuse what was never sealed.
    let batch = await this.requireBatch(table, batchId);
    if (batch.state === 'COMMITTED') {
      await this.ensurePublished(batch);
      return this.outcome(batch, 'already-committed', batch.version ?? 0, finishedPending);
    }

    for (let attempt = 0; attempt < MAX_RESERVE_ATTEMPTS; attempt++) {
      const head = await ledger.getTable(table);
      if (head.pending && head.pending.batchId !== batchId) {
        // A committer died after reserving: that version is finished first, so versions stay contiguous.
        const other = await this.requireBatch(table, head.pending.batchId);
        await this.publishReserved(other, head.pending);
        finishedPending.push(head.pending.version);
        continue;
      }
      let pending = head.pending;
      if (!pending) {
        // C2. Reserve head+1 (only while the batch is still SEALED).
        const candidate: PendingVersion = {
          version: head.head + 1,
          batchId,
          reservedAt: new Date(this.deps.now()).toISOString(),
        };
        if (!(await ledger.reserveVersion(table, head.head, candidate))) {
          batch = await this.requireBatch(table, batchId);
          if (batch.state === 'COMMITTED') {
            await this.ensurePublished(batch);
            return this.outcome(batch, 'already-committed', batch.version ?? 0, finishedPending);
          }
          continue;
        }
        pending = candidate;
      }
      // C3-C5.
      const result = await this.publishReserved(batch, pending);
      batch = { ...batch, state: 'COMMITTED', version: pending.version };
      return this.outcome(batch, result, pending.version, finishedPending);
    }
    throw new InletError(`could not reserve a version for ${table}/${batchId}: the table head kept moving`, {
      retryable: true,
    });
  }

  private async requireBatch(table: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.deps.ledger.getBatch(table, batchId);
    if (!batch || batch.state === 'ABORTED')
      throw new BatchNotSealedError(table, batchId, batch?.state ?? 'UNKNOWN');
    return batch;
  }

  /** C3 write the manifest (or find ours), C4 the commit transaction, C5 the event. */
  private async publishReserved(
    batch: BatchRecord,
    pending: PendingVersion,
  ): Promise<'committed' | 'already-committed'> {
    const { ledger, store, log } = this.deps;
    if (!batch.stagedKey)
      throw new BatchNotSealedError(batch.table, batch.batchId, `${batch.state} without a staged list`);
    const list = await store.getStagedList(batch.stagedKey);
    const manifest = buildManifest(list, pending.version, pending.reservedAt);
    if ((await store.putManifestIfAbsent(manifest)) === 'exists') {
      const existing = await store.getManifest(batch.table, pending.version);
      const found = existing?.batchIds ?? [];
      if (found.length !== 1 || found[0] !== batch.batchId) {
        log.error('manifest fork refused', {
          table: batch.table,
          version: pending.version,
          batchId: batch.batchId,
          found,
        });
        throw new ManifestConflictError(batch.table, pending.version, batch.batchId, found);
      }
    }
    const result = await ledger.finalizeCommit(batch.table, pending, {
      files: manifest.fileCount,
      bytes: manifest.bytes,
    });
    await this.ensurePublished({
      ...batch,
      state: 'COMMITTED',
      version: pending.version,
      committedAt: pending.reservedAt,
    });
    return result;
  }

  private async ensurePublished(batch: BatchRecord): Promise<void> {
    if (batch.publishedAt || batch.version === undefined) return;
    const committedAt = batch.committedAt ?? new Date(this.deps.now()).toISOString();
    await this.deps.events.batchCommitted({
      table: batch.table,
      version: batch.version,
      batchId: batch.batchId,
      files: batch.fileCount ?? 0,
      bytes: batch.bytes ?? 0,
      manifestKey: manifestKey(batch.table, batch.version),
      committedAt,
    });
    await this.deps.ledger.markPublished(batch.table, batch.batchId, new Date(this.deps.now()).toISOString());
  }

  private outcome(
    batch: BatchRecord,
    result: CommitOutcome['result'],
    version: number,
    finishedPending: number[],
  ): CommitOutcome {
    return {
      table: batch.table,
      batchId: batch.batchId,
      result,
      version,
      files: batch.fileCount ?? 0,
      bytes: batch.bytes ?? 0,
      minEventTime: batch.minEventTime,
      finishedPending,
    };
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchNotSealedError,
  InletError,
  isThrottle,
  ManifestAheadOfLedgerError,
  ManifestConflictError,
  StagedListMissingError,
  UnknownOutcomeError,
} from '../errors.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';
import { buildManifest, type Manifest, manifestKey } from '../manifest.ts';
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
  /**
   * False when the commit stands but its clean-up failed (staged-list delete, `BatchCommitted` event or
   * the published mark): the batch stays in the sealed index and the sweeper has it retried.
   */
  readonly published: boolean;
}

const MAX_RESERVE_ATTEMPTS = 5;
/** Manifest puts answered 409 (a conditional write in flight) or 412 with nothing readable yet. */
const MANIFEST_PUT_ATTEMPTS = 5;

/** Full jitter, so two committers that collided do not collide again. */
const backoff = (attempt: number) => sleep(Math.random() * Math.min(2000, 50 * 2 ** attempt));

/**
 * The committer (docs/protocol.md, C1-C5). Runs one table at a time (FIFO group = table), but is safe if
 * two run at once: the reservation is a conditional write, the manifest a conditional put, the final step a
 * conditional transaction. Any of those may report an error although it was applied; each is re-read.
 */
export class CommitBatch {
  constructor(private readonly deps: CommitDeps) {}

  async commit(table: string, batchId: string): Promise<CommitOutcome> {
    const { ledger } = this.deps;
    const finishedPending: number[] = [];
    // C1. Nothing to do if done (but what follows the commit); refuse what was never sealed.
    let batch = await this.requireBatch(table, batchId);
    if (batch.state === 'COMMITTED') return this.alreadyCommitted(batch, finishedPending);

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
        if (await this.manifestAheadRaced(table, head.head, batchId)) continue;
        // C2. Reserve head+1 (only while the batch is still SEALED).
        const candidate: PendingVersion = {
          version: head.head + 1,
          batchId,
          reservedAt: new Date(this.deps.now()).toISOString(),
        };
        if (!(await ledger.reserveVersion(table, head.head, candidate))) {
          batch = await this.requireBatch(table, batchId);
          if (batch.state === 'COMMITTED') return this.alreadyCommitted(batch, finishedPending);
          continue;
        }
        pending = candidate;
      }
      // C3-C5.
      const { result, published } = await this.publishReserved(batch, pending);
      batch = { ...batch, state: 'COMMITTED', version: pending.version };
      return this.outcome(batch, result, pending.version, finishedPending, published);
    }
    throw new InletError(`could not reserve a version for ${table}/${batchId}: the table head kept moving`, {
      retryable: true,
    });
  }

  private async alreadyCommitted(batch: BatchRecord, finishedPending: number[]): Promise<CommitOutcome> {
    const published = await this.afterCommit(batch);
    return this.outcome(batch, 'already-committed', batch.version ?? 0, finishedPending, published);
  }

  private async requireBatch(table: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.deps.ledger.getBatch(table, batchId);
    if (!batch || batch.state === 'ABORTED')
      throw new BatchNotSealedError(table, batchId, batch?.state ?? 'UNKNOWN');
    return batch;
  }

  /**
   * Before reserving head+1: a manifest h+1 that the ledger does not know (ledger re-created or restored,
   * bucket shared by two stacks) would make every reservation end in ManifestConflictError, forever. One
   * GetObject per commit buys a refusal that says what to do. Our own batch's manifest is not a conflict:
   * a ledger restored to before our commit reserves the same version again and C3 finds it ours. A racing
   * committer that reserved and wrote h+1 since our read is not one either: the table shows it (true).
   */
  private async manifestAheadRaced(table: string, head: number, batchId: string): Promise<boolean> {
    const existing = await this.deps.store.getManifest(table, head + 1);
    if (!existing) return false;
    if (existing.batchIds.length === 1 && existing.batchIds[0] === batchId) return false;
    const now = await this.deps.ledger.getTable(table);
    if (now.head !== head || now.pending) return true;
    this.deps.log.error('manifest bucket is ahead of the ledger', { table, head, found: existing.batchIds });
    throw new ManifestAheadOfLedgerError(table, head, existing.batchIds);
  }

  /** C3 write the manifest (or find ours), C4 the commit transaction, C5 what follows the commit. */
  private async publishReserved(
    batch: BatchRecord,
    pending: PendingVersion,
  ): Promise<{ result: 'committed' | 'already-committed'; published: boolean }> {
    const { ledger, store, log } = this.deps;
    if (!batch.stagedKey)
      throw new BatchNotSealedError(batch.table, batch.batchId, `${batch.state} without a staged list`);
    let list: Awaited<ReturnType<BatchStore['getStagedList']>>;
    try {
      list = await store.getStagedList(batch.stagedKey);
    } catch (error) {
      if (!(error instanceof StagedListMissingError)) throw error;
      // Lists are deleted only after their commit: a racing committer finished this batch meanwhile.
      const now = await ledger.getBatch(batch.table, batch.batchId);
      if (now?.state === 'COMMITTED')
        return { result: 'already-committed', published: await this.afterCommit(now) };
      log.error('staged list of a sealed batch is missing', {
        table: batch.table,
        batchId: batch.batchId,
        key: batch.stagedKey,
      });
      throw error;
    }
    const manifest = buildManifest(list, pending.version, pending.reservedAt);
    await this.writeManifest(manifest, batch.batchId);
    const result = await ledger.finalizeCommit(batch.table, pending, {
      files: manifest.fileCount,
      bytes: manifest.bytes,
    });
    const published = await this.afterCommit({
      ...batch,
      state: 'COMMITTED',
      version: pending.version,
      committedAt: pending.reservedAt,
    });
    return { result, published };
  }

  /**
   * C3. `If-None-Match: *`. 409 means a conditional write to the key is in flight (ours from an earlier
   * attempt, or a racing committer's): try again. 412, or a put whose outcome is unknown, means read it:
   * ours, go on; another batch's, a fork; nothing readable yet, put again.
   */
  private async writeManifest(manifest: Manifest, batchId: string): Promise<void> {
    const { store, log } = this.deps;
    for (let attempt = 1; attempt <= MANIFEST_PUT_ATTEMPTS; attempt++) {
      let put: Awaited<ReturnType<BatchStore['putManifestIfAbsent']>>;
      try {
        put = await store.putManifestIfAbsent(manifest);
      } catch (error) {
        // S3 SlowDown applied nothing (classified so only when no attempt may have): put again shortly.
        if (isThrottle(error) && !(error instanceof UnknownOutcomeError)) put = 'conflict';
        else if (error instanceof UnknownOutcomeError) put = 'exists';
        else throw error;
      }
      if (put === 'created') return;
      if (put === 'exists') {
        const existing = await store.getManifest(manifest.table, manifest.version);
        if (existing) {
          const found = existing.batchIds;
          if (found.length === 1 && found[0] === batchId) return;
          log.error('manifest fork refused', {
            table: manifest.table,
            version: manifest.version,
            batchId,
            found,
          });
          throw new ManifestConflictError(manifest.table, manifest.version, batchId, [...found]);
        }
      }
      await backoff(attempt);
    }
    throw new InletError(
      `manifest ${manifest.table} v${manifest.version}: conditional put kept conflicting; retried later`,
      { retryable: true },
    );
  }

  /**
   * C5, after the commit transaction: delete the staged list, publish `BatchCommitted`, mark published
   * (which takes the batch out of the sealed index). The commit stands whatever fails here: failing the
   * FIFO message would block the table's group and dead-letter a committed batch. What failed is retried
   * when the sweeper finds the batch still in the index and re-requests its commit (C1 comes here again).
   */
  private async afterCommit(batch: BatchRecord): Promise<boolean> {
    if (batch.publishedAt || batch.version === undefined) return true;
    try {
      if (batch.stagedKey) await this.deps.store.deleteStagedList(batch.stagedKey);
      await this.deps.events.batchCommitted({
        table: batch.table,
        version: batch.version,
        batchId: batch.batchId,
        files: batch.fileCount ?? 0,
        bytes: batch.bytes ?? 0,
        manifestKey: manifestKey(batch.table, batch.version),
        committedAt: batch.committedAt ?? new Date(this.deps.now()).toISOString(),
      });
      await this.deps.ledger.markPublished(
        batch.table,
        batch.batchId,
        new Date(this.deps.now()).toISOString(),
      );
      return true;
    } catch (error) {
      this.deps.log.warn('committed, not yet published: the sweeper retries it', {
        table: batch.table,
        batchId: batch.batchId,
        version: batch.version,
        error: String(error),
      });
      return false;
    }
  }

  private outcome(
    batch: BatchRecord,
    result: CommitOutcome['result'],
    version: number,
    finishedPending: number[],
    published: boolean,
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
      published,
    };
  }
}

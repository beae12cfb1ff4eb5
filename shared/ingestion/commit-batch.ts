import type { Clock } from '../kernel/clock.ts';
import {
  BatchNotSealedError,
  InletError,
  ManifestAheadOfLedgerError,
  StagedListMissingError,
} from '../kernel/errors.ts';
import type { Log } from '../kernel/log.ts';
import type { BatchStore, EventPublisher } from './batch-store.ts';
import { DEFAULT_GROUP_LIMITS, type GroupLimits, mapLimit, selectGroup } from './commit-group.ts';
import { sameIds, writeManifest } from './commit-manifest.ts';
import { type CommittedVersion, GROUP_CONCURRENCY, type Member, publishCommitted } from './commit-publish.ts';
import { type Ledger, reservedBatchIds } from './ledger.ts';
import { buildManifest, type Manifest, type StagedList } from './manifest.ts';
import { BATCH_STATE, type BatchRecord, type PendingVersion } from './model.ts';
import { retryRead } from './retry-read.ts';

export interface CommitDeps extends Clock {
  readonly ledger: Ledger;
  readonly store: BatchStore;
  readonly events: EventPublisher;
  readonly log: Log;
  /** Group commit bounds. @default DEFAULT_GROUP_LIMITS */
  readonly group?: GroupLimits;
}

export interface CommitOutcome {
  readonly table: string;
  readonly batchId: string;
  /** 'committed' now, or it already was (a duplicate request, or committed in another batch's group). */
  readonly result: 'committed' | 'already-committed';
  readonly version: number;
  /** The version's batches when this call committed it (group commit), else this batch alone. */
  readonly batchIds: readonly string[];
  /** Files and bytes of the version when committed now; of this batch when it already was. */
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

/** What one `commit` call may spend: reads are retried until `deadline` (epoch ms) comes close. */
interface Run {
  readonly deadline?: number;
}

/**
 * The committer (docs/protocol.md, C1-C5). Runs one table at a time (FIFO group = table), but is safe if
 * two run at once: the reservation is a conditional write, the manifest a conditional put, the final step a
 * conditional transaction. Any of those may report an error although it was applied; each is re-read.
 * Group commit: one version takes the requested batch and the table's other SEALED batches (the `sealed`
 * index, one Query), within `GroupLimits`; their own requests then find them COMMITTED (C1).
 */
export class CommitBatch {
  private readonly limits: GroupLimits;

  constructor(private readonly deps: CommitDeps) {
    this.limits = deps.group ?? DEFAULT_GROUP_LIMITS;
  }

  /**
   * `deadline`: epoch ms by which the invocation must return (Lambda: now + remaining time); reads that
   * fail for load are retried until shortly before it.
   */
  async commit(table: string, batchId: string, run: Run = {}): Promise<CommitOutcome> {
    const { ledger } = this.deps;
    const read = <T>(call: () => Promise<T>) => retryRead(this.deps, run.deadline, call);
    const finishedPending: number[] = [];
    // C1. Nothing to do if done (but what follows the commit); refuse what was never sealed.
    let batch = await this.requireBatch(table, batchId, run);
    if (batch.state === BATCH_STATE.committed) return this.alreadyCommitted(batch, finishedPending, run);
    // After a refused grouped reservation (a stale index entry, a batch committed meanwhile) the next try
    // is this batch alone: progress never depends on the index.
    let grouping = this.limits.maxBatches > 1;

    for (let attempt = 0; attempt < MAX_RESERVE_ATTEMPTS; attempt++) {
      const head = await read(() => ledger.getTable(table));
      if (head.pending && !reservedBatchIds(head.pending).includes(batchId)) {
        // A committer died after reserving: that version is finished first, so versions stay contiguous.
        await this.publishReserved(table, head.pending, new Map(), run);
        finishedPending.push(head.pending.version);
        continue;
      }
      let pending = head.pending;
      let known = new Map([[batchId, batch]]);
      if (!pending) {
        const group = grouping ? await this.chooseGroup(batch, run) : [batch];
        const batchIds = group.map((b) => b.batchId);
        if (await this.manifestAheadRaced(table, head.head, batchIds, run)) continue;
        // C2. Reserve head+1 for the group (only while every batch of it is still SEALED). The staged keys
        // ride along, so whoever finishes the version reads the lists without reading each batch first.
        const stagedKeys = group.map((b) => b.stagedKey);
        const candidate: PendingVersion = {
          version: head.head + 1,
          batchId,
          reservedAt: new Date(this.deps.now()).toISOString(),
          ...(batchIds.length > 1 ? { batchIds } : {}),
          ...(stagedKeys.every((k) => k !== undefined) ? { stagedKeys: stagedKeys as string[] } : {}),
        };
        if (!(await ledger.reserveVersion(table, head.head, candidate))) {
          batch = await this.requireBatch(table, batchId, run);
          if (batch.state === BATCH_STATE.committed)
            return this.alreadyCommitted(batch, finishedPending, run);
          grouping = false;
          continue;
        }
        pending = candidate;
        known = new Map(group.map((b) => [b.batchId, b]));
      }
      // C3-C5.
      const { result, published, version } = await this.publishReserved(table, pending, known, run);
      if (result === 'already-committed' || !version) {
        batch = (await read(() => ledger.getBatch(table, batchId)).catch(() => undefined)) ?? batch;
        return this.outcome(batch, result, finishedPending, published);
      }
      return {
        ...this.outcome(
          { ...batch, state: BATCH_STATE.committed, version: version.version },
          result,
          finishedPending,
          published,
        ),
        batchIds: version.batches.map((b) => b.batchId),
        files: version.files,
        bytes: version.bytes,
        minEventTime: version.minEventTime,
      };
    }
    throw new InletError(`could not reserve a version for ${table}/${batchId}: the table head kept moving`, {
      retryable: true,
    });
  }

  /**
   * The requested batch and the table's other waiting batches, within the limits (one Query). The Query
   * only proposes: if it keeps failing, this version commits the requested batch alone.
   */
  private async chooseGroup(batch: BatchRecord, run: Run): Promise<BatchRecord[]> {
    try {
      const waiting = await retryRead(this.deps, run.deadline, () =>
        this.deps.ledger.listSealedForCommit(batch.table, this.limits.maxBatches),
      );
      return selectGroup(batch, waiting, this.limits);
    } catch (error) {
      if (!(error instanceof InletError && error.retryable)) throw error;
      this.deps.log.warn('sealed index unreadable: committing the batch alone', {
        table: batch.table,
        batchId: batch.batchId,
        error: String(error),
      });
      return [batch];
    }
  }

  /**
   * A request for a batch that is COMMITTED: only C5 may be left. The version may hold other batches
   * (group commit): its manifest names them, and C5 is finished for all of them.
   */
  private async alreadyCommitted(
    batch: BatchRecord,
    finishedPending: number[],
    run: Run,
  ): Promise<CommitOutcome> {
    if (batch.publishedAt || batch.version === undefined)
      return this.outcome(batch, 'already-committed', finishedPending, true);
    const { version } = batch;
    const read = <T>(call: () => Promise<T>) => retryRead(this.deps, run.deadline, call);
    let manifest: Manifest | undefined;
    let batches: (BatchRecord | undefined)[];
    try {
      manifest = await read(() => this.deps.store.getManifest(batch.table, version));
      const ids = manifest?.batchIds.includes(batch.batchId) ? manifest.batchIds : [batch.batchId];
      batches = await mapLimit(ids, GROUP_CONCURRENCY, async (id) =>
        id === batch.batchId ? batch : read(() => this.deps.ledger.getBatch(batch.table, id)),
      );
    } catch (error) {
      // The commit stands: C5 is left to the sweeper's re-request rather than failing the FIFO message.
      this.deps.log.warn('committed, not yet published: the sweeper retries it', {
        table: batch.table,
        batchId: batch.batchId,
        version,
        error: String(error),
      });
      return this.outcome(batch, 'already-committed', finishedPending, false);
    }
    const published = await publishCommitted(this.deps, {
      table: batch.table,
      version: batch.version,
      committedAt: batch.committedAt ?? new Date(this.deps.now()).toISOString(),
      batches: batches.filter((b): b is BatchRecord => b?.state === BATCH_STATE.committed && !b.publishedAt),
      files: manifest?.fileCount ?? batch.fileCount ?? 0,
      bytes: manifest?.bytes ?? batch.bytes ?? 0,
    });
    return this.outcome(batch, 'already-committed', finishedPending, published);
  }

  private async requireBatch(table: string, batchId: string, run: Run): Promise<BatchRecord> {
    const batch = await retryRead(this.deps, run.deadline, () => this.deps.ledger.getBatch(table, batchId));
    if (!batch || batch.state === BATCH_STATE.aborted)
      throw new BatchNotSealedError(table, batchId, batch?.state ?? 'UNKNOWN');
    return batch;
  }

  /**
   * Before reserving head+1: a manifest h+1 that the ledger does not know (ledger re-created or restored,
   * bucket shared by two stacks) would make every reservation end in ManifestConflictError, forever. One
   * GetObject per commit buys a refusal that says what to do. Our own group's manifest is not a conflict:
   * a ledger restored to before our commit reserves the same version again and C3 finds it ours. A racing
   * committer that reserved and wrote h+1 since our read is not one either: the table shows it (true).
   */
  private async manifestAheadRaced(
    table: string,
    head: number,
    batchIds: readonly string[],
    run: Run,
  ): Promise<boolean> {
    const read = <T>(call: () => Promise<T>) => retryRead(this.deps, run.deadline, call);
    const existing = await read(() => this.deps.store.getManifest(table, head + 1));
    if (!existing) return false;
    if (sameIds(existing.batchIds, batchIds)) return false;
    const now = await read(() => this.deps.ledger.getTable(table));
    if (now.head !== head || now.pending) return true;
    this.deps.log.error('manifest bucket is ahead of the ledger', { table, head, found: existing.batchIds });
    throw new ManifestAheadOfLedgerError(table, head, existing.batchIds);
  }

  /**
   * C3 write the manifest (or find ours), C4 the commit transaction, C5 what follows the commit, for every
   * batch of the reservation. Its staged keys come from the reservation itself; only a reservation written
   * without them (before they were stored) has its batches read here, or taken from `known`.
   */
  private async publishReserved(
    table: string,
    pending: PendingVersion,
    known: ReadonlyMap<string, BatchRecord>,
    run: Run,
  ): Promise<{ result: 'committed' | 'already-committed'; published: boolean; version?: CommittedVersion }> {
    const { ledger, store, log } = this.deps;
    const read = <T>(call: () => Promise<T>) => retryRead(this.deps, run.deadline, call);
    const ids = reservedBatchIds(pending);
    const members: Member[] =
      pending.stagedKeys?.length === ids.length
        ? ids.map((batchId, i) => ({ batchId, stagedKey: pending.stagedKeys?.[i] }))
        : await mapLimit(
            ids,
            GROUP_CONCURRENCY,
            async (id) => known.get(id) ?? this.requireBatch(table, id, run),
          );
    const lists = await mapLimit(members, GROUP_CONCURRENCY, async ({ batchId, stagedKey }) => {
      if (!stagedKey) throw new BatchNotSealedError(table, batchId, 'a batch without a staged list');
      try {
        return await read(() => store.getStagedList(stagedKey));
      } catch (error) {
        if (!(error instanceof StagedListMissingError)) throw error;
        return undefined;
      }
    });
    const missing = members.find((_, i) => lists[i] === undefined);
    if (missing) {
      // Lists are deleted only after their commit, and a version's batches commit in one transaction: a
      // racing committer finished this version meanwhile.
      const now = await read(() => ledger.getBatch(table, missing.batchId));
      if (now?.state === BATCH_STATE.committed)
        return {
          result: 'already-committed',
          published: (await this.alreadyCommitted(now, [], run)).published,
        };
      log.error('staged list of a sealed batch is missing', {
        table,
        batchId: missing.batchId,
        key: missing.stagedKey,
      });
      throw new StagedListMissingError(missing.stagedKey ?? missing.batchId);
    }
    const staged = lists as StagedList[];
    const manifest = buildManifest(staged, pending.version, pending.reservedAt);
    await writeManifest(this.deps, manifest, ids, run.deadline);
    const result = await ledger.finalizeCommit(table, pending, {
      files: manifest.fileCount,
      bytes: manifest.bytes,
    });
    const version: CommittedVersion = {
      table,
      version: pending.version,
      committedAt: pending.reservedAt,
      batches: members,
      files: manifest.fileCount,
      bytes: manifest.bytes,
      minEventTime: minOf(staged.flatMap((list) => list.files.map((f) => f.eventTime))),
    };
    return { result, published: await publishCommitted(this.deps, version), version };
  }

  private outcome(
    batch: BatchRecord,
    result: CommitOutcome['result'],
    finishedPending: number[],
    published: boolean,
  ): CommitOutcome {
    return {
      table: batch.table,
      batchId: batch.batchId,
      result,
      version: batch.version ?? 0,
      batchIds: [batch.batchId],
      files: batch.fileCount ?? 0,
      bytes: batch.bytes ?? 0,
      minEventTime: batch.minEventTime,
      finishedPending,
      published,
    };
  }
}

function minOf(times: readonly (string | undefined)[]): string | undefined {
  return times.reduce<string | undefined>(
    (min, t) => (t !== undefined && (min === undefined || t < min) ? t : min),
    undefined,
  );
}

import pLimit from 'p-limit';
import type { Log } from '../kernel/log.ts';
import type { BatchStore, EventPublisher } from './batch-store.ts';
import type { Ledger } from './ledger.ts';
import { manifestKey } from './manifest.ts';

/** S3 and DynamoDB calls per group in flight at once (staged-list reads, deletes, published marks). */
export const GROUP_CONCURRENCY = 16;

/** A batch of a version, as much as C3-C5 need of it. */
export interface Member {
  readonly batchId: string;
  readonly stagedKey?: string;
}

/** A version's batches as committed, with what C5 needs. */
export interface CommittedVersion {
  readonly table: string;
  readonly version: number;
  readonly committedAt: string;
  readonly batches: readonly Member[];
  readonly files: number;
  readonly bytes: number;
  readonly minEventTime?: string;
}

/**
 * C5 (docs/protocol.md), after the commit transaction: delete the staged lists, publish `BatchCommitted`
 * once for the version, mark each batch published (which takes it out of the sealed index). The commit
 * stands whatever fails here: failing the FIFO message would block the table's group and dead-letter a
 * committed batch. What failed is retried when the sweeper finds a batch still in the index and
 * re-requests its commit (C1 comes here again, for the whole version). False when something failed.
 */
export async function publishCommitted(
  deps: {
    readonly ledger: Ledger;
    readonly store: BatchStore;
    readonly events: EventPublisher;
    readonly log: Log;
    readonly now: () => number;
  },
  version: CommittedVersion,
): Promise<boolean> {
  const { store, events, ledger } = deps;
  const [first] = version.batches;
  if (!first) return true;
  try {
    await pLimit(GROUP_CONCURRENCY).map(version.batches, async (b) => {
      if (b.stagedKey) await store.deleteStagedList(b.stagedKey);
    });
    await events.batchCommitted({
      table: version.table,
      version: version.version,
      batchId: first.batchId,
      ...(version.batches.length > 1 ? { batchIds: version.batches.map((b) => b.batchId) } : {}),
      files: version.files,
      bytes: version.bytes,
      manifestKey: manifestKey(version.table, version.version),
      committedAt: version.committedAt,
    });
    const at = new Date(deps.now()).toISOString();
    await pLimit(GROUP_CONCURRENCY).map(version.batches, (b) =>
      ledger.markPublished(version.table, b.batchId, at),
    );
    return true;
  } catch (error) {
    deps.log.warn('committed, not yet published: the sweeper retries it', {
      table: version.table,
      batchIds: version.batches.map((b) => b.batchId),
      version: version.version,
      error: String(error),
    });
    return false;
  }
}

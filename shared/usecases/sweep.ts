import type { PipelineConfig } from '../config.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';
import type { CommitQueue } from '../storage/batch-store.ts';

export interface SweepDeps {
  readonly config: PipelineConfig;
  readonly ledger: Ledger;
  readonly commitQueue: CommitQueue;
  readonly log: Log;
  readonly now: () => number;
}

export interface SweepResult {
  /** Sealed batches whose commit request was re-sent. */
  readonly resent: number;
  /** Reservations left by a committer that died, re-requested. */
  readonly stalePending: number;
}

/**
 * Liveness (I5) for what no SQS message will bring back: a batch sealed by a batcher that died before it
 * sent the commit request, or a version reserved by a committer that died with no later commit to finish
 * it. Runs on a schedule; idempotent (FIFO dedup + the committer's C1 make re-sends harmless).
 */
export async function sweepStale(deps: SweepDeps, olderThanMs: number): Promise<SweepResult> {
  const cutoff = deps.now() - olderThanMs;
  let resent = 0;
  let stalePending = 0;
  for (const { name } of deps.config.tables) {
    for (const batch of await deps.ledger.listSealedBatches(name, cutoff)) {
      await deps.commitQueue.requestCommit(name, batch.batchId);
      resent += 1;
      deps.log.warn('stale sealed batch: commit re-requested', { table: name, batchId: batch.batchId });
    }
    const head = await deps.ledger.getTable(name);
    if (head.pending && Date.parse(head.pending.reservedAt) < cutoff) {
      await deps.commitQueue.requestCommit(name, head.pending.batchId);
      stalePending += 1;
      deps.log.warn('stale reserved version: commit re-requested', { table: name, ...head.pending });
    }
  }
  return { resent, stalePending };
}

/** True while any table has a sealed batch not yet committed or a reserved version not yet finished. */
export async function commitsInFlight(
  ledger: Ledger,
  tables: readonly { readonly name: string }[],
): Promise<boolean> {
  for (const { name } of tables) {
    if ((await ledger.listSealedBatches(name, Number.MAX_SAFE_INTEGER)).length > 0) return true;
    if ((await ledger.getTable(name)).pending) return true;
  }
  return false;
}

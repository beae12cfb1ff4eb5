import { DEFAULTS } from '../kernel/defaults.ts';
import type { Log } from '../kernel/log.ts';
import type { CommitQueue } from './batch-store.ts';
import type { Ledger, SealedIndexKey } from './ledger.ts';
import { BATCH_STATE, type BatchRecord } from './model.ts';

export interface SweepDeps {
  readonly ledger: Ledger;
  readonly commitQueue: CommitQueue;
  readonly log: Log;
  readonly now: () => number;
}

export interface SweepLimits {
  /** Commit requests re-sent per run at most, oldest batches first; the rest wait for the next run. */
  readonly maxResends: number;
  /** Wall-clock budget of a run (below the Lambda timeout): no call is started after it. */
  readonly budgetMs: number;
  /** Items per Scan page of the sealed index. */
  readonly pageSize: number;
}

export const DEFAULT_SWEEP_LIMITS: SweepLimits = {
  maxResends: DEFAULTS.sweeper.maxResends,
  budgetMs: DEFAULTS.sweeper.budgetSeconds * 1000,
  pageSize: DEFAULTS.sweeper.pageSize,
};

export interface SweepResult {
  /** Sealed batches whose commit request was re-sent. */
  readonly resent: number;
  /** Reservations left by a committer that died, re-requested. */
  readonly stalePending: number;
  /** Committed batches not yet published (or whose staged list is not yet deleted), re-requested. */
  readonly unpublished: number;
  /** Stale work found but left for the next run: over the cap, out of time, or refused by SQS. */
  readonly deferred: number;
  /** Tables in the index, configured or not. */
  readonly tables: number;
  /** Tables (or index pages) whose sweep failed this run; the others went on. */
  readonly errors: number;
  /** False when the budget ran out before the whole index was read. */
  readonly complete: boolean;
}

interface Candidate {
  readonly table: string;
  readonly batchId: string;
  readonly since: number;
  readonly kind: 'sealed' | 'pending' | 'unpublished';
}

/** Share of the budget the index scan may use; the rest is for the re-sends. */
const SCAN_SHARE = 0.5;
const SEND_CHUNK = 10;

/**
 * Liveness (I5) for what no SQS message will bring back: a batch sealed by a batcher that died before it
 * sent the commit request, a version reserved by a committer that died with no later commit to finish it,
 * a committed version whose event failed. It reads the ledger, not the configuration: a table removed or
 * renamed is still finished. Every pending version is found this way too, because a reservation requires
 * its batch SEALED, and a SEALED batch is in the index. Idempotent (FIFO dedup + the committer's C1).
 */
export async function sweepStale(
  deps: SweepDeps,
  olderThanMs: number,
  limits: SweepLimits = DEFAULT_SWEEP_LIMITS,
): Promise<SweepResult> {
  const started = deps.now();
  const cutoff = started - olderThanMs;
  const deadline = started + limits.budgetMs;
  const outOfTime = () => deps.now() >= deadline;

  const { byTable, complete, scanErrors } = await scanIndex(
    deps,
    cutoff,
    started + limits.budgetMs * SCAN_SHARE,
    limits,
  );
  let errors = scanErrors;
  const candidates: Candidate[] = [];
  for (const [table, stale] of byTable) {
    candidates.push(...stale);
    if (outOfTime()) continue;
    try {
      const head = await deps.ledger.getTable(table);
      if (head.pending && Date.parse(head.pending.reservedAt) < cutoff)
        candidates.push({ table, batchId: head.pending.batchId, since: 0, kind: 'pending' });
    } catch (error) {
      errors += 1;
      deps.log.error('sweep: table head unreadable', { table, error: String(error) });
    }
  }

  // Reservations first (they hold their table), then oldest first, up to the cap.
  candidates.sort((a, b) => a.since - b.since);
  const seen = new Set<string>();
  const chosen = candidates.filter((c) => {
    const key = `${c.table}#${c.batchId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const total = chosen.length;
  const sent = { sealed: 0, pending: 0, unpublished: 0 };
  const perTable = new Map<string, Candidate[]>();
  for (const c of chosen.slice(0, limits.maxResends)) {
    const list = perTable.get(c.table) ?? [];
    list.push(c);
    perTable.set(c.table, list);
  }
  // Round robin, a chunk of 10 per table per turn: a slow or failing table cannot use up the budget of the
  // others, and a table's own requests still go out oldest first (its reservation, if stale, leads).
  const failedTables = new Set<string>();
  for (let turn = 0; !outOfTime(); turn++) {
    let sentThisTurn = false;
    for (const [table, list] of perTable) {
      const chunk = list.slice(turn * SEND_CHUNK, (turn + 1) * SEND_CHUNK);
      if (chunk.length === 0 || failedTables.has(table) || outOfTime()) continue;
      sentThisTurn = true;
      try {
        const rejected = new Set(
          await deps.commitQueue.requestCommits(
            table,
            chunk.map((c) => c.batchId),
            `sweep-${started}`,
          ),
        );
        for (const c of chunk) if (!rejected.has(c.batchId)) sent[c.kind] += 1;
      } catch (error) {
        // One table's failure (its queue group, a throttle) does not stop the others.
        failedTables.add(table);
        errors += 1;
        deps.log.error('sweep: re-requests failed for a table', { table, error: String(error) });
      }
    }
    if (!sentThisTurn) break;
  }
  for (const [table, list] of perTable) {
    if (!failedTables.has(table))
      deps.log.warn('stale batches: commits re-requested', {
        table,
        batchIds: list.slice(0, 20).map((c) => `${c.kind}:${c.batchId}`),
        planned: list.length,
      });
  }
  const resentTotal = sent.sealed + sent.pending + sent.unpublished;
  const result: SweepResult = {
    resent: sent.sealed,
    stalePending: sent.pending,
    unpublished: sent.unpublished,
    deferred: total - resentTotal,
    tables: byTable.size,
    errors,
    complete,
  };
  if (result.deferred > 0 || !complete || errors > 0)
    deps.log.warn('sweep left work for its next run', { ...result });
  return result;
}

/** Pages through the sealed index (all tables) until done or out of its share of the budget. */
async function scanIndex(
  deps: SweepDeps,
  cutoff: number,
  scanDeadline: number,
  limits: SweepLimits,
): Promise<{ byTable: Map<string, Candidate[]>; complete: boolean; scanErrors: number }> {
  const byTable = new Map<string, Candidate[]>();
  let startKey: SealedIndexKey | undefined;
  do {
    if (deps.now() >= scanDeadline) return { byTable, complete: false, scanErrors: 0 };
    try {
      const page = await deps.ledger.scanSealedIndex({ startKey, limit: limits.pageSize });
      for (const batch of page.batches) {
        const list = byTable.get(batch.table) ?? [];
        byTable.set(batch.table, list);
        const candidate = staleCandidate(batch, cutoff);
        if (candidate) list.push(candidate);
      }
      startKey = page.nextKey;
    } catch (error) {
      deps.log.error('sweep: sealed index scan failed', { error: String(error) });
      return { byTable, complete: false, scanErrors: 1 };
    }
  } while (startKey);
  return { byTable, complete: true, scanErrors: 0 };
}

function staleCandidate(batch: BatchRecord, cutoff: number): Candidate | undefined {
  const since = batch.sealedAt ?? 0;
  const committed = batch.committedAt ? Date.parse(batch.committedAt) : since;
  if (batch.state === BATCH_STATE.sealed && since < cutoff)
    return { table: batch.table, batchId: batch.batchId, since, kind: 'sealed' };
  // committedAt is the reservation time: a commit younger than the cutoff may still be publishing.
  if (batch.state === BATCH_STATE.committed && committed < cutoff)
    return { table: batch.table, batchId: batch.batchId, since, kind: 'unpublished' };
  return undefined;
}

/**
 * True while any of these tables has a commit or a publication outstanding: a batch in the sealed index
 * (SEALED, or COMMITTED and not yet published) or a reserved version.
 */
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

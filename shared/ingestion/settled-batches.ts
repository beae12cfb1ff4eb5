import type { Log } from '../kernel/log.ts';
import type { Ledger } from './ledger.ts';
import type { BatchRecord } from './model.ts';

/** A commit request: a table and one of its batches. */
export interface CommitRequest {
  readonly table: string;
  readonly batchId: string;
}

/** One consistent read covers at most this many batches (BatchGetItem's 100 keys). */
const READ_AT_ONCE = 100;

const keyOf = (table: string, batchId: string) => `${table}#${batchId}`;

/** COMMITTED never changes back, and `publishedAt` is a commit's last write (C5): nothing is left to do. */
const settled = (batch: BatchRecord) => batch.state === 'COMMITTED' && batch.publishedAt !== undefined;

/**
 * The commit requests of one committer invocation that need no work (docs/protocol.md, C1 and group commit):
 * batches whose commit is wholly done. Group commit leaves a backlog's other requests to find their batch
 * COMMITTED; answering each of them costs a consistent read. Instead one consistent read of the invocation's
 * batches comes first, and the invocation's own commits add the versions they publish (the batches of a
 * group whose requests come later in the same invocation). Only a final state counts, so a request answered
 * here is one C1 would have answered with the same no-op; anything else takes the whole commit path, which
 * reads afresh. A read that fails only costs the saving: every request then takes that path.
 */
export class SettledBatches {
  private readonly done = new Set<string>();

  /** Reads the batches of `requests` (when there are several: one request alone gains nothing). */
  static async read(
    ledger: Pick<Ledger, 'getBatches'>,
    requests: readonly CommitRequest[],
    log: Log,
  ): Promise<SettledBatches> {
    const known = new SettledBatches();
    if (requests.length < 2) return known;
    const byTable = new Map<string, string[]>();
    for (const { table, batchId } of requests) byTable.set(table, [...(byTable.get(table) ?? []), batchId]);
    for (const [table, batchIds] of byTable) {
      for (let i = 0; i < batchIds.length; i += READ_AT_ONCE) {
        try {
          const batches = await ledger.getBatches(table, batchIds.slice(i, i + READ_AT_ONCE));
          for (const batch of batches) if (settled(batch)) known.done.add(keyOf(table, batch.batchId));
        } catch (error) {
          log.warn('commit requests not read ahead: each is read on its own', {
            table,
            error: String(error),
          });
        }
      }
    }
    return known;
  }

  has(table: string, batchId: string): boolean {
    return this.done.has(keyOf(table, batchId));
  }

  /** Batches of a version this invocation committed and published (C5 done for every one of them). */
  add(table: string, batchIds: readonly string[]): void {
    for (const batchId of batchIds) this.done.add(keyOf(table, batchId));
  }
}

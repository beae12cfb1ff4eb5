import type { Clock } from '../kernel/clock.ts';
import { InletError } from '../kernel/errors.ts';
import { comparePositions } from './delta-log.ts';
import { LogPut } from './log-put.ts';
import type { DeltaStore, SinkPosition } from './ports.ts';
import { applyToHead, headPosition, type TableHead } from './table-head.ts';

/** Foreign commits stepped over in one commit: far more than any maintenance job makes in seconds. */
const MAX_FOREIGN = 1000;

export type CommitOutcome =
  /** Ours at `version`: the table is at the part's end. */
  | { readonly kind: 'committed'; readonly version: number }
  /** Another run of this sink moved the table first (a racing sink): re-plan from where it is now. */
  | { readonly kind: 'superseded' }
  /** Another writer changed the table's metaData or protocol: the part's schema may no longer hold. */
  | { readonly kind: 'stale' };

export interface CommitDeps extends Pick<Clock, 'sleep' | 'random'> {
  readonly delta: DeltaStore;
}

/**
 * Puts a prepared commit at the next free Delta version (PROTOCOL.md "Delta Log Entries": named using the
 * next available version number), the optimistic loop every Delta writer runs, with idempotency on the
 * `txn` (PROTOCOL.md "Transaction Identifiers") rather than on a fixed version:
 * - created: ours.
 * - 412 (or an outcome the SDK could not tell): read that version. The very bytes we sent: ours (an earlier
 *   attempt's put was applied). Another commit of ours: a racing sink wrote the table's next part, so this
 *   one is superseded (its data files stay orphans). Someone else's blind append, compaction or VACUUM log:
 *   step over it and put at the next version. Someone else's metaData or protocol: `stale`.
 * - 409 (another conditional write to the key in flight) or S3 SlowDown: wait and put again.
 * `head` follows every version read or written, so the caller's view of the table stays current.
 */
export async function commitAtNextVersion(
  deps: CommitDeps,
  head: TableHead,
  table: string,
  body: string,
  start: SinkPosition,
): Promise<CommitOutcome> {
  const log = new LogPut(deps, `bronze table ${table}`);
  for (let foreign = 0; foreign <= MAX_FOREIGN; ) {
    const version = head.version + 1;
    const put = await log.put(version, body);
    if (put.kind === 'again') continue;
    if (put.kind === 'created') {
      applyToHead(head, table, version, body);
      return { kind: 'committed', version };
    }
    const summary = applyToHead(head, table, version, put.text);
    if (put.text === body) return { kind: 'committed', version };
    if (summary.ours || comparePositions(headPosition(head, table), start) !== 0)
      return { kind: 'superseded' };
    if (summary.metaData || summary.protocol) return { kind: 'stale' };
    foreign += 1;
  }
  throw new InletError(`bronze table ${table}: more than ${MAX_FOREIGN} foreign commits while committing`, {
    retryable: true,
  });
}

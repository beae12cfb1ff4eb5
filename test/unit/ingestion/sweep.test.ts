import { describe, expect, it } from 'vitest';
import type { CommitQueue } from '../../../shared/ingestion/batch-store.ts';
import type { Ledger, SealedIndexKey } from '../../../shared/ingestion/ledger.ts';
import type { BatchRecord, PendingVersion, TableRecord } from '../../../shared/ingestion/model.ts';
import { type SweepLimits, sweepStale } from '../../../shared/ingestion/sweep.ts';
import type { Log } from '../../../shared/kernel/log.ts';

const silent: Log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A fake clock every fake AWS call advances: what a run costs is measured in calls, not in sleeps. */
class Clock {
  ms = 1_000_000;
  readonly now = () => this.ms;
}

/** The sealed index and table heads in memory, with DynamoDB's paging; each page costs `pageMs`. */
class MemoryIndex {
  readonly batches = new Map<string, BatchRecord>();
  readonly pending = new Map<string, PendingVersion>();
  failingTables = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly pageMs: number,
  ) {}

  seal(table: string, batchId: string, sealedAt: number): void {
    this.batches.set(`${table}#${batchId}`, { table, batchId, state: 'SEALED', sealedAt });
  }

  /** What a committer does with a re-request: the batch leaves the index. */
  commit(table: string, batchId: string): void {
    this.batches.delete(`${table}#${batchId}`);
  }

  // Only what the sweeper calls; the rest of the port is not part of this use case.
  readonly ledger = {
    scanSealedIndex: async (page: { startKey?: SealedIndexKey; limit?: number }) => {
      this.clock.ms += this.pageMs;
      // Scan order is DynamoDB's hash order, not time order: shuffle-like, by key.
      const all = [...this.batches.entries()].sort(([a], [b]) => (hash(a) < hash(b) ? -1 : 1));
      const from = (page.startKey?.offset as number | undefined) ?? 0;
      const to = from + (page.limit ?? 1000);
      return {
        batches: all.slice(from, to).map(([, batch]) => batch),
        nextKey: to < all.length ? { offset: to } : undefined,
      };
    },
    getTable: async (table: string): Promise<TableRecord> => {
      this.clock.ms += 5;
      if (this.failingTables.has(table)) throw new Error(`ledger unavailable for ${table}`);
      return { table, head: 0, files: 0, bytes: 0, pending: this.pending.get(table) };
    },
  } as unknown as Ledger;
}

const hash = (s: string) => {
  let h = 2166136261;
  for (const c of s) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h;
};

class MemoryQueue implements CommitQueue {
  readonly sent: { table: string; batchId: string }[] = [];
  calls = 0;
  failingTables = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly callMs: number,
  ) {}

  async requestCommit(table: string, batchId: string): Promise<void> {
    await this.requestCommits(table, [batchId], 'single');
  }

  async requestCommits(table: string, batchIds: readonly string[], _resendId: string): Promise<string[]> {
    expect(batchIds.length).toBeLessThanOrEqual(10);
    this.calls += 1;
    this.clock.ms += this.callMs;
    if (this.failingTables.has(table)) throw new Error(`SQS throttled ${table}`);
    for (const batchId of batchIds) this.sent.push({ table, batchId });
    return [];
  }
}

function setup(options: { pageMs?: number; callMs?: number } = {}) {
  const clock = new Clock();
  const index = new MemoryIndex(clock, options.pageMs ?? 300);
  const queue = new MemoryQueue(clock, options.callMs ?? 30);
  const deps = { ledger: index.ledger, commitQueue: queue, log: silent, now: clock.now };
  return { clock, index, queue, deps };
}

const STALE_MS = 300_000;
const limits: SweepLimits = { maxResends: 4000, budgetMs: 20_000, pageSize: 1000 };

describe('sweeper at scale', () => {
  it('re-requests a backlog of 10,000 sealed batches within a few runs, oldest first, each run in budget', async () => {
    const { clock, index, queue, deps } = setup();
    const tables = ['orders', 'events', 'clicks', 'legacy-renamed'];
    for (let i = 0; i < 10_000; i++) {
      index.seal(
        tables[i % tables.length] as string,
        `b${String(i).padStart(5, '0')}`,
        clock.ms - STALE_MS - 10_000 + i,
      );
    }
    const requested = new Set<string>();
    let runs = 0;

    while (requested.size < 10_000 && runs < 5) {
      const started = clock.ms;
      const before = queue.sent.length;
      const result = await sweepStale(deps, STALE_MS, limits);
      runs += 1;
      expect(clock.ms - started).toBeLessThanOrEqual(limits.budgetMs);
      expect(result.errors).toBe(0);
      const thisRun = queue.sent.slice(before);
      expect(thisRun.length).toBeLessThanOrEqual(limits.maxResends);
      // Oldest first: nothing left in the index is older than what this run re-sent.
      const newest = Math.max(...thisRun.map((r) => Number(r.batchId.slice(1))));
      for (const r of thisRun) {
        requested.add(r.batchId);
        index.commit(r.table, r.batchId);
      }
      const oldestLeft = Math.min(...[...index.batches.values()].map((b) => Number(b.batchId.slice(1))));
      if (index.batches.size > 0) expect(oldestLeft).toBeGreaterThan(newest);
      clock.ms += 300_000; // the schedule
    }

    expect(requested.size).toBe(10_000);
    expect(runs).toBe(3);
    // SendMessageBatch of 10.
    expect(queue.calls).toBe(1000);
  });

  it('stops starting calls when its budget is spent and leaves the rest for the next run', async () => {
    const { clock, index, queue, deps } = setup({ callMs: 200 });
    for (let i = 0; i < 3000; i++)
      index.seal('orders', `b${String(i).padStart(5, '0')}`, clock.ms - STALE_MS - 5000 + i);
    const started = clock.ms;

    const result = await sweepStale(deps, STALE_MS, { ...limits, budgetMs: 10_000 });

    // A call started before the deadline may finish after it: at most one call's time over.
    expect(clock.ms - started).toBeLessThanOrEqual(10_000 + 200);
    expect(result.resent).toBe(queue.sent.length);
    expect(result.resent).toBeGreaterThan(0);
    expect(result.resent).toBeLessThan(3000);
    expect(result.deferred).toBe(3000 - result.resent);
  });

  it('a table whose re-sends or head read fail does not stop the others', async () => {
    const { clock, index, queue, deps } = setup();
    for (const table of ['a', 'b', 'c']) index.seal(table, `${table}1`, clock.ms - STALE_MS - 1);
    queue.failingTables.add('a');
    (index as MemoryIndex).failingTables.add('b');

    const result = await sweepStale(deps, STALE_MS, limits);

    expect(result.errors).toBe(2);
    // b's head read failed, but its stale batch is still re-requested; a's sends failed; c is untouched.
    expect(queue.sent.map((r) => r.batchId).sort()).toEqual(['b1', 'c1']);
    expect(result).toMatchObject({ resent: 2, tables: 3 });
  });

  it('re-requests a stale reservation first, even over the cap, and not its batch twice', async () => {
    const { clock, index, queue, deps } = setup();
    for (let i = 0; i < 20; i++) index.seal('orders', `b${i}`, clock.ms - STALE_MS - 1000 + i);
    index.seal('orders', 'held', clock.ms - STALE_MS - 1);
    index.pending.set('orders', {
      version: 7,
      batchId: 'held',
      reservedAt: new Date(clock.ms - STALE_MS - 1).toISOString(),
    });

    const result = await sweepStale(deps, STALE_MS, { ...limits, maxResends: 5 });

    expect(queue.sent[0]).toEqual({ table: 'orders', batchId: 'held' });
    expect(queue.sent.filter((r) => r.batchId === 'held')).toHaveLength(1);
    expect(result).toMatchObject({ stalePending: 1, resent: 4, deferred: 16 });
  });

  it('ignores batches younger than the threshold, and committed ones still publishing', async () => {
    const { clock, index, queue, deps } = setup();
    index.seal('orders', 'young', clock.ms - 1000);
    index.batches.set('orders#done', {
      table: 'orders',
      batchId: 'done',
      state: 'COMMITTED',
      sealedAt: clock.ms - STALE_MS - 5000,
      committedAt: new Date(clock.ms - 1000).toISOString(),
      version: 3,
    });
    index.batches.set('orders#unpublished', {
      table: 'orders',
      batchId: 'unpublished',
      state: 'COMMITTED',
      sealedAt: clock.ms - STALE_MS - 5000,
      committedAt: new Date(clock.ms - STALE_MS - 1000).toISOString(),
      version: 2,
    });

    const result = await sweepStale(deps, STALE_MS, limits);

    expect(queue.sent).toEqual([{ table: 'orders', batchId: 'unpublished' }]);
    expect(result).toMatchObject({ resent: 0, unpublished: 1, deferred: 0 });
  });

  it('shares its budget between tables: one slow table does not starve the others', async () => {
    const { clock, index, queue, deps } = setup({ callMs: 100 });
    for (let i = 0; i < 500; i++) index.seal('big', `big${i}`, clock.ms - STALE_MS - 10_000 + i);
    index.seal('small', 'small1', clock.ms - STALE_MS - 1);

    await sweepStale(deps, STALE_MS, { ...limits, budgetMs: 2_000 });

    // Only a handful of calls fit; small's one request is among them although big's are all older.
    expect(queue.sent.length).toBeLessThan(500);
    expect(queue.sent).toContainEqual({ table: 'small', batchId: 'small1' });
  });
});

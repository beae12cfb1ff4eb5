import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeBackfillDefinition } from '../../../bench/backfill-definition.ts';
import { parseCause, resumeHint } from '../../../cli/backfill/run-view.ts';
import { runStandalone } from '../../../local/step-functions/standalone.ts';
import { S3InventoryReader } from '../../../shared/backfill/aws/s3-inventory-reader.ts';
import type { BackfillDeps } from '../../../shared/backfill/backfill.ts';
import { makeBackfillHandler } from '../../../shared/backfill/backfill-handler.ts';
import {
  compareKeys,
  discoverRanges,
  inRange,
  listingPrefix,
  type Partition,
  prefixEnd,
} from '../../../shared/backfill/partitions.ts';
import type { ListPage, ListRequest, ObjectLister, PrefixRequest } from '../../../shared/backfill/ports.ts';
import type { BackfillSummary } from '../../../shared/backfill/request.ts';
import { fitPartitions } from '../../../shared/backfill/state-size.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { DefiniteFailureError } from '../../../shared/kernel/errors.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { writeInventoryReport } from '../../support/inventory.ts';
import { inventoryS3 } from './inventory-s3-fake.ts';

/** ListObjectsV2 over keys in memory: Prefix, StartAfter, MaxKeys, Delimiter, in UTF-8 order. */
class MemoryLister implements ObjectLister {
  readonly keys: string[];
  lists = 0;
  constructor(keys: readonly string[]) {
    this.keys = [...keys].sort(compareKeys);
  }
  async list(r: ListRequest): Promise<ListPage> {
    this.lists += 1;
    const after = this.keys.filter(
      (k) => k.startsWith(r.prefix) && (r.startAfter === undefined || compareKeys(k, r.startAfter) > 0),
    );
    const page = after.slice(0, r.limit);
    return {
      objects: page.map((key) => ({
        key,
        size: 1,
        eTag: 'e',
        versionId: null,
        lastModified: '2026-11-30T00:00:00.000Z',
      })),
      lastKey: page.at(-1),
      more: after.length > page.length,
    };
  }
  async commonPrefixes(r: PrefixRequest): Promise<string[]> {
    const found = new Set<string>();
    for (const k of this.keys) {
      if (!k.startsWith(r.prefix)) continue;
      const rest = k.slice(r.prefix.length);
      const cut = rest.indexOf(r.delimiter);
      if (cut >= 0) found.add(r.prefix + rest.slice(0, cut + 1));
    }
    return [...found].sort(compareKeys);
  }
}

/** Nothing ingested yet; every enqueued key recorded, with how often. */
function world(keys: readonly string[], enqueue?: (files: readonly ObjectRef[]) => void) {
  const lister = new MemoryLister(keys);
  const enqueued = new Map<string, number>();
  const deps: BackfillDeps = {
    config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/' }] }),
    landingBucket: 'landing',
    lister,
    ledger: { knownIdentities: async () => new Set<string>() } as unknown as Ledger,
    enqueuer: {
      enqueue: async (files) => {
        enqueue?.(files);
        for (const f of files) enqueued.set(f.key, (enqueued.get(f.key) ?? 0) + 1);
      },
    },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 2, pageSize: 10, stepBudgetMs: 60_000, stepsPerExecution: 8 },
  };
  return { deps, lister, enqueued };
}

let definition: object;
beforeAll(() => {
  definition = synthesizeBackfillDefinition();
}, 60_000);

function run(deps: BackfillDeps, input: Record<string, unknown>) {
  return runStandalone({ definition, handler: makeBackfillHandler(deps), input, retryIntervalMs: 1 });
}

// Folders at two levels, a folder marker object, keys directly under the prefix, a key sorting between
// folders ('orders/05x.json' after 'orders/05/'), a non-ASCII key.
const KEYS = [
  ...Array.from({ length: 300 }, (_, i) => `orders/${String(i % 12).padStart(2, '0')}/${i % 3}/f-${i}.json`),
  // Folder markers: keys equal to the range boundaries, listed by exactly one range.
  ...Array.from({ length: 12 }, (_, i) => `orders/${String(i).padStart(2, '0')}/`),
  'orders/05x.json',
  'orders/top.json',
  'orders/zz/ü-é.json',
];
/** Folder markers are listed (ranges start at them) but route to no table, as live events don't. */
const FILES = KEYS.filter((k) => !k.endsWith('/')).sort(compareKeys);

describe('key ranges from common prefixes', () => {
  it('cover every key under the prefix exactly once, whatever the target', async () => {
    const lister = new MemoryLister(KEYS);
    for (const target of [1, 2, 5, 13, 40]) {
      const ranges = await discoverRanges(lister, { bucket: 'b', prefix: 'orders/', target });
      expect(ranges.length).toBeLessThanOrEqual(Math.max(1, target));
      const owners = KEYS.map((k) => ranges.filter((r: Partition) => inRange(r, k)).length);
      expect(owners.every((n) => n === 1)).toBe(true);
    }
  });
});

describe('coalescing partitions (to fit the state machine state)', () => {
  it('keeps every key covered by one range, ranges and window prefixes alike', async () => {
    const lister = new MemoryLister(KEYS);
    const ranges = await discoverRanges(lister, { bucket: 'b', prefix: 'orders/', target: 13 });
    for (const max of [1, 2, 3, 5]) {
      const fitted = fitPartitions(ranges, (ps) => ps.length <= max);
      expect(fitted.length).toBeLessThanOrEqual(max);
      expect(
        KEYS.every((k) => fitted.filter((r) => inRange(r, k) && k.startsWith(listingPrefix(r))).length === 1),
      ).toBe(true);
    }
    // Window prefixes (a reconcile): each one's keys stay in the one partition that replaced it.
    const windows = ['orders/03/', 'orders/05/', 'orders/05x', 'orders/zz/'].map((prefix) => ({ prefix }));
    const [one] = fitPartitions(windows, (ps) => ps.length <= 1);
    for (const k of KEYS.filter((key) => windows.some((w) => key.startsWith(w.prefix))))
      expect(inRange(one as Partition, k) && k.startsWith(listingPrefix(one as Partition)), k).toBe(true);
    expect(prefixEnd('orders/zz/')).toBe('orders/zz0');
    expect(prefixEnd('a\uD7FF')).toBe('a\uE000');
  });
});

describe('parallel backfill through the state machine (Map of partitions, local executor)', () => {
  it('enqueues every key exactly once, partitions running at once, continuing as new executions', async () => {
    const { deps, enqueued } = world(KEYS);
    const chain = await run(deps, { table: 'orders', concurrency: 4 });
    const last = chain.at(-1);
    expect(last?.status).toBe('SUCCEEDED');
    const summary = last?.output as BackfillSummary;
    expect(summary.partitions).toBeGreaterThan(4);
    expect(summary).toMatchObject({ listed: KEYS.length, enqueued: FILES.length, complete: true });
    expect([...enqueued.keys()].sort(compareKeys)).toEqual(FILES);
    expect([...enqueued.values()].every((n) => n === 1)).toBe(true);
    // 8 steps per execution over 16 partitions: one step (20 keys) each: the run needed more than one execution.
    expect(chain.length).toBeGreaterThan(1);
  });

  it("a partition that keeps failing ends the run with every pending partition's resume point; resuming finishes the job once", async () => {
    let failing = true;
    const { deps, enqueued } = world(KEYS, (files) => {
      if (failing && files.some((f) => f.key.startsWith('orders/07/')))
        throw new DefiniteFailureError('enqueue failed: AccessDenied');
    });
    const failed = (await run(deps, { table: 'orders', concurrency: 3 })).at(-1);
    expect(failed?.status).toBe('FAILED');
    expect(failed?.error).toBe('DefiniteFailureError');
    const cause = JSON.parse(failed?.cause ?? '{}') as { summary: BackfillSummary };
    const resume = cause.summary.resume?.partitions ?? [];
    expect(resume.length).toBeGreaterThan(0);
    expect(cause.summary.complete).toBe(false);

    failing = false;
    const resumed = (await run(deps, { table: 'orders', partitions: resume })).at(-1);
    expect(resumed?.status).toBe('SUCCEEDED');
    // Nothing lost; what was enqueued before the failure is not enqueued again (the cursor moved past it).
    expect([...enqueued.keys()].sort(compareKeys)).toEqual(FILES);
    expect([...enqueued.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('resuming a failed inventory run (the input `inlet backfill status` prints)', () => {
  it('continues each data file from its row: nothing refused, nothing restarted, nothing enqueued twice', async () => {
    const s3 = inventoryS3();
    const rows = Array.from({ length: 3 }, (_, f) =>
      Array.from({ length: 12 }, (_, r) => ['landing', `orders/f${f}-${String(r).padStart(2, '0')}.json`]),
    ).flat();
    const manifest = await writeInventoryReport(s3.client, {
      destination: 'inv',
      sourceBucket: 'landing',
      prefix: 'inv/landing/all',
      columns: 'Bucket, Key',
      rows,
      files: 3,
    });
    // Pages of 5 rows, 2 pages a step: the second step of file 1 fails at its first page.
    let failing = true;
    const { deps, enqueued } = world([], (files) => {
      if (failing && files.some((f) => f.key === 'orders/f1-10.json'))
        throw new DefiniteFailureError('enqueue failed: AccessDenied');
    });
    const inventoryDeps: BackfillDeps = {
      ...deps,
      inventory: new S3InventoryReader(s3.client),
      limits: { ...deps.limits, pageSize: 5 },
    };
    const input = { table: 'orders', inventory: manifest, concurrency: 3 };
    const failed = (await run(inventoryDeps, input)).at(-1);
    expect(failed?.status).toBe('FAILED');
    const hint = resumeHint(input, parseCause(failed?.cause).summary);
    const printed = /this input: (\{.*\})$/.exec(hint)?.[1];
    expect(printed, hint).toBeDefined();
    const before = s3.served();

    failing = false;
    const resumed = (await run(inventoryDeps, JSON.parse(printed ?? '{}'))).at(-1);
    expect(resumed?.status, resumed?.cause).toBe('SUCCEEDED');
    expect([...enqueued.keys()].sort()).toEqual(rows.map((r) => r[1]).sort());
    expect([...enqueued.values()].every((n) => n === 1)).toBe(true);
    // Only the failed file was read again (its first rows skipped, not enqueued).
    expect(s3.served() - before).toBeLessThan(
      (s3.get('inv', 'inv/landing/all/data/1.csv.gz')?.size ?? 0) + 2_000,
    );
  });
});

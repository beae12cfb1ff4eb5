import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import { sweepStale } from '../../../shared/ingestion/sweep.ts';
import { makeSweeperHandler } from '../../../shared/ingestion/sweeper-handler.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { SERVICE } from '../../../shared/kernel/names.ts';
import { sweeperRuntimeFromEnv } from '../../../shared/runtime/sweeper.ts';
import { functionEnv } from '../../support/function-env.ts';

/** The sweeper's settings as its runtime reads them from the environment the construct writes. */
const settings = (env: Record<string, string> = {}) =>
  sweeperRuntimeFromEnv(SERVICE.sweeper, { ...functionEnv('sweeper'), ...env }).settings;

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('sweeper handler', () => {
  it("stops before the Lambda's own timeout: the budget is the remaining time minus the margin", async () => {
    const index = endlessIndex();
    const handler = makeSweeperHandler(index.deps, settings({ INLET_SWEEP_MARGIN_SECONDS: '10' }));

    const result = await handler({}, { getRemainingTimeInMillis: () => 30_000 });

    // 20 s of budget, half of it for the scan: 10 pages, then it gives up for this run.
    expect(index.pages()).toBe(10);
    expect(result.complete).toBe(false);
    expect(index.clock()).toBeLessThanOrEqual(20_000);
  });

  it('one sweep budget: a sweep given no limits (the simulation, the harnesses) stops where the sweeper with no Lambda context does', async () => {
    const bySweeper = endlessIndex();
    await makeSweeperHandler(bySweeper.deps, settings())();
    const byDefault = endlessIndex();
    await sweepStale(byDefault.deps, 300_000);

    expect(byDefault.pages()).toBe(bySweeper.pages());
  });
});

/** An index that never ends, each page costing 1 s: only the budget stops the scan. */
function endlessIndex() {
  let clock = 0;
  let pages = 0;
  const ledger = {
    scanSealedIndex: async () => {
      pages += 1;
      clock += 1000;
      return { batches: [], nextKey: { page: pages } };
    },
    getTable: async () => ({ table: 't', head: 0, files: 0, bytes: 0 }),
  } as unknown as Ledger;
  return {
    deps: {
      ledger,
      commitQueue: { requestCommit: async () => {}, requestCommits: async () => [] },
      log: silent,
      now: () => clock,
      metrics: new MemoryMetrics(),
    },
    pages: () => pages,
    clock: () => clock,
  };
}

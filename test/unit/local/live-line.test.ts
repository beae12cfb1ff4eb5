import { describe, expect, it } from 'vitest';
import { committedTotals, liveLine } from '../../../local/summary.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import type { TableRecord } from '../../../shared/ingestion/model.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';

/** A ledger whose TABLE items say what the manifests say. */
function ledgerWithHeads(heads: Record<string, { head: number; files: number }>): Ledger {
  return {
    getTable: async (table: string) => ({ head: 0, files: 0, bytes: 0, ...heads[table] }) as TableRecord,
  } as unknown as Ledger;
}

describe('the local live line', () => {
  it('counts committed files and versions from the ledger heads, including versions finished on behalf of another batch', async () => {
    // What the committer's metrics say when one invocation finished another batch's pending version
    // (finishedPending) and counted only its own batch's files.
    const metrics = new MemoryMetrics();
    metrics.count('FilesClaimed', 986);
    metrics.count('FilesCommitted', 834);
    metrics.count('VersionsCommitted', 9);
    const ledger = ledgerWithHeads({ orders: { head: 6, files: 600 }, clicks: { head: 4, files: 386 } });
    const tables = [{ name: 'orders' }, { name: 'clicks' }];
    const baseline = { files: 0, versions: 0 };

    const line = liveLine(
      metrics.totals,
      { ingest: 0, ingestDlq: 0, commitDlq: 0 },
      {
        now: await committedTotals(ledger, tables),
        baseline,
      },
    );
    expect(line).toContain('committed 986 | versions 10');
  });

  it('counts only what this run committed when the ledger already had versions', async () => {
    const ledger = ledgerWithHeads({ orders: { head: 12, files: 1200 } });
    const line = liveLine(
      new MemoryMetrics().totals,
      { ingest: 3, ingestDlq: 0, commitDlq: 1 },
      {
        now: await committedTotals(ledger, [{ name: 'orders' }]),
        baseline: { files: 1000, versions: 10 },
      },
    );
    expect(line).toContain('committed 200 | versions 2');
    expect(line).toContain('queued 3 | DLQ 1');
  });
});

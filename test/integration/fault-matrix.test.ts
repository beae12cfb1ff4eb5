import { afterAll, expect, it } from 'vitest';
import { destroyClients } from '../../shared/aws/clients.ts';
import { runMatrix, summaryLine } from '../faults/matrix.ts';
import { testClients } from '../support/aws.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

it('crash matrix: a crash before or after every AWS call loses nothing and duplicates nothing', async () => {
  const { points, results } = await runMatrix(clients, { concurrency: 4 });
  const line = summaryLine(results);
  console.log(line);
  const failures = results
    .filter((r) => r.lost.length > 0 || r.duplicated.length > 0 || r.problems.length > 0)
    .map((r) => ({
      scenario: r.scenario.name,
      lost: r.lost,
      duplicated: r.duplicated,
      problems: r.problems,
    }));
  expect(failures).toEqual([]);
  // The workload must keep reaching every step of the protocol, or the matrix silently tests less.
  for (const step of [
    'batcher:ledger.quarantine',
    'batcher:ledger.claimFile',
    'batcher:ledger.getBatch',
    'batcher:ledger.fenceBatch',
    'batcher:ledger.moveFile',
    'batcher:store.putStagedList',
    'batcher:ledger.sealBatch',
    'batcher:commitQueue.requestCommit',
    'committer:ledger.reserveVersion',
    'committer:store.putManifestIfAbsent',
    'committer:ledger.finalizeCommit',
    'committer:events.batchCommitted',
  ])
    expect(points).toContain(step);
  expect(line).toMatch(/^faults: \d+ scenarios, 0 lost, 0 duplicated$/);
}, 600_000);

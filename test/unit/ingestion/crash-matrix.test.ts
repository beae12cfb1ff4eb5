// The whole crash matrix on the in-memory fakes (every occurrence of every port call, crashed before,
// after, or applied-then-refused), and proof that it catches broken protocols. The emulator runs a few of
// its points (test/integration/fault-matrix.test.ts) so the adapters are crossed too.
import { describe, expect, it } from 'vitest';
import { failuresOf, runMatrix, summaryLine } from '../../faults/matrix.ts';
import { memoryTarget } from '../../faults/targets.ts';

// The workload must keep reaching every step of the protocol, or the matrix silently tests less.
const STEPS = [
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
];

describe('crash matrix on the fakes', () => {
  it('a crash before or after every port call, or a call applied then refused, loses and duplicates nothing', async () => {
    const { points, results } = await runMatrix(memoryTarget(), { concurrency: 1, occurrences: 'all' });
    console.log(summaryLine(results));
    expect(failuresOf(results)).toEqual([]);
    expect(points).toEqual(expect.arrayContaining(STEPS));
  });

  // The matrix's verdicts are worth something only if a broken protocol fails them: each variant breaks one
  // rule (test/sim/variants.ts) and some scenario must lose a file because of it.
  it.each([
    ['old-classification', /applied, then refused/],
    ['ack-busy', /batcher crashes (before|after) /],
  ] as const)('catches the broken variant %s', async (variant, where) => {
    const { results } = await runMatrix(memoryTarget(variant), { concurrency: 1, occurrences: 'all' });
    const caught = failuresOf(results).filter((f) => f.lost.length > 0);
    expect(caught.map((f) => f.scenario)).toContainEqual(expect.stringMatching(where));
  });
});

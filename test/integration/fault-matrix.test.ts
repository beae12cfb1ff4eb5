// The crash matrix's smoke on the emulator: a few of its points through the real DynamoDB/S3/SQS adapters,
// one per kind of recovery (lease takeover, a seal re-issued, a manifest rewritten onto 412, a commit
// transaction applied behind an error). The whole matrix runs on the fakes: test/unit/ingestion/crash-matrix.test.ts.
import { afterAll, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { failuresOf, runMatrix, summaryLine } from '../faults/matrix.ts';
import { motoTarget } from '../faults/targets.ts';
import { testClients } from '../support/aws.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

const SMOKE = [
  'batcher crashes after ledger.claimFile #1',
  'batcher: ledger.sealBatch #1 applied, then refused',
  'committer crashes after store.putManifestIfAbsent #1',
  'committer: ledger.finalizeCommit #1 applied, then refused',
];

it('crash matrix smoke: crashes and masked writes through the adapters lose and duplicate nothing', async () => {
  const { results } = await runMatrix(motoTarget(clients), {
    concurrency: 4,
    only: (scenario) => SMOKE.includes(scenario.name),
  });
  console.log(summaryLine(results));
  // Every smoke point still exists in the workload (a renamed port method would silently drop it).
  expect(results.map((r) => r.scenario.name).sort()).toEqual([...SMOKE].sort());
  expect(failuresOf(results)).toEqual([]);
}, 300_000);

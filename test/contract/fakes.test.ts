/**
 * The port contracts against the simulation's in-memory fakes (no network; the unit project). Several
 * seeds: the fakes' latencies come from the seed, and a fake that only answers right when its calls are
 * far apart in simulated time is a drift too. The unit tests' bronze fakes are held to the same contract.
 */
import { describe } from 'vitest';
import { MemoryCursors, MemoryDelta } from '../unit/bronze/memory.ts';
import { MemoryManifests } from '../unit/bronze/memory-manifests.ts';
import { deltaStoreContract, sinkCursorContract } from './bronze-contract.ts';
import { fakeBronzeTarget, fakeSymlinkManifests, fakeTarget } from './fake-target.ts';
import { ledgerContract } from './ledger-contract.ts';
import { batchStoreContract, commitQueueContract } from './storage-contract.ts';
import { symlinkManifestsContract } from './symlink-contract.ts';

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  describe(`fakes, seed ${seed}`, () => {
    const target = () => fakeTarget(seed);
    ledgerContract(target);
    batchStoreContract(target);
    commitQueueContract(target);
    const bronze = () => fakeBronzeTarget(seed);
    deltaStoreContract(bronze);
    sinkCursorContract(bronze);
    symlinkManifestsContract(() => fakeSymlinkManifests(seed));
  });
}

describe('unit test fakes', () => {
  const memory = async () => ({ delta: () => new MemoryDelta(), cursors: new MemoryCursors() });
  deltaStoreContract(memory);
  sinkCursorContract(memory);
  symlinkManifestsContract(async () => new MemoryManifests());
});

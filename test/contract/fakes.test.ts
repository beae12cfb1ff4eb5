/** The port contracts against the simulation's in-memory fakes (no network; the unit project). */
import { fakeTarget } from './fake-target.ts';
import { ledgerContract } from './ledger-contract.ts';
import { batchStoreContract, commitQueueContract } from './storage-contract.ts';

ledgerContract(fakeTarget);
batchStoreContract(fakeTarget);
commitQueueContract(fakeTarget);

// Scheduled sweeper: re-requests commits of sealed batches, reserved versions and unpublished commits
// that nobody finished, in every table the ledger holds.

import { makeSweeperHandler } from '../shared/ingestion/sweeper-handler.ts';
import { SERVICE } from '../shared/kernel/names.ts';
import { sweeperRuntimeFromEnv } from '../shared/runtime/sweeper.ts';

const runtime = sweeperRuntimeFromEnv(SERVICE.sweeper);

export const handler = makeSweeperHandler(runtime, runtime.settings);

// Scheduled sweeper: re-requests commits of sealed batches, reserved versions and unpublished commits
// that nobody finished, in every table the ledger holds.

import { makeSweeperHandler, sweeperSettingsFromEnv } from '../shared/ingestion/sweeper-handler.ts';
import { SERVICE } from '../shared/kernel/names.ts';
import { sweeperRuntimeFromEnv } from '../shared/runtime/pipeline.ts';

export const handler = makeSweeperHandler(
  sweeperRuntimeFromEnv(SERVICE.sweeper),
  sweeperSettingsFromEnv(process.env),
);

// Scheduled sweeper: re-requests commits of sealed batches, reserved versions and unpublished commits
// that nobody finished, in every table the ledger holds.
import { sweeperRuntimeFromEnv } from '../shared/aws/runtime.ts';
import { makeSweeperHandler, sweeperSettingsFromEnv } from '../shared/handlers/sweeper-handler.ts';
import { SERVICE } from '../shared/names.ts';

export const handler = makeSweeperHandler(
  sweeperRuntimeFromEnv(SERVICE.sweeper),
  sweeperSettingsFromEnv(process.env),
);

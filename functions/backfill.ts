// Backfill, reprocess and reconcile steps, called by the backfill state machine (infra/backfill.ts).
import { backfillFromEnv } from '../shared/aws/runtime.ts';
import { makeBackfillHandler } from '../shared/handlers/backfill-handler.ts';

export const handler = makeBackfillHandler(backfillFromEnv('inlet-backfill'));

// Backfill, reprocess and reconcile steps, called by the backfill state machine (infra/backfill.ts).
import { backfillFromEnv } from '../shared/aws/runtime.ts';
import { makeBackfillHandler } from '../shared/handlers/backfill-handler.ts';
import { SERVICE } from '../shared/names.ts';

export const handler = makeBackfillHandler(backfillFromEnv(SERVICE.backfill));

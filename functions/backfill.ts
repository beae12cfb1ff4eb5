// Backfill, reprocess and reconcile steps, called by the backfill state machine (infra/backfill.ts).

import { makeBackfillHandler } from '../shared/backfill/backfill-handler.ts';
import { SERVICE } from '../shared/kernel/names.ts';
import { backfillFromEnv } from '../shared/runtime/backfill.ts';

export const handler = makeBackfillHandler(backfillFromEnv(SERVICE.backfill));

// Scheduled bronze maintenance: optimize (small files rewritten into large ones) then vacuum, per table.

import { makeMaintenanceHandler } from '../shared/bronze/maintenance-handler.ts';
import { maintenanceRuntimeFromEnv } from '../shared/runtime/maintenance.ts';

export const handler = makeMaintenanceHandler(maintenanceRuntimeFromEnv());

// Batching Lambda: S3 events from the ingestion queue -> claims -> sealed batch -> commit request.

import { makeBatcherHandler } from '../shared/ingestion/batcher-handler.ts';
import { SERVICE } from '../shared/kernel/names.ts';
import { batcherRuntimeFromEnv } from '../shared/runtime/batcher.ts';

const runtime = batcherRuntimeFromEnv(SERVICE.batcher);

export const handler = makeBatcherHandler(runtime);

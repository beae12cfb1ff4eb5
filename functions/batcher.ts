// Batching Lambda: S3 events from the ingestion queue -> claims -> sealed batch -> commit request.
import { batcherRuntimeFromEnv } from '../shared/aws/runtime.ts';
import { makeBatcherHandler } from '../shared/handlers/batcher-handler.ts';
import { SERVICE } from '../shared/names.ts';

const runtime = batcherRuntimeFromEnv(SERVICE.batcher);

export const handler = makeBatcherHandler(runtime);

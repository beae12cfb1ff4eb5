// Batching Lambda: S3 events from the ingestion queue -> claims -> sealed batch -> commit request.
import { runtimeFromEnv } from '../shared/aws/runtime.ts';
import { makeBatcherHandler } from '../shared/handlers/batcher-handler.ts';

const runtime = runtimeFromEnv('inlet-batcher');

export const handler = makeBatcherHandler(runtime);

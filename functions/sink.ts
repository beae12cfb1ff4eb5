// Bronze sink Lambda: committed manifest versions of a table -> Delta Lake commits (docs/bronze.md).
import { sinkRuntimeFromEnv } from '../shared/bronze/runtime.ts';
import { makeSinkHandler } from '../shared/handlers/sink-handler.ts';

const runtime = sinkRuntimeFromEnv();

export const handler = makeSinkHandler(runtime);

// Bronze sink Lambda: committed manifest versions of a table -> Delta Lake commits (docs/bronze.md).

import { makeSinkHandler } from '../shared/bronze/sink-handler.ts';
import { sinkRuntimeFromEnv } from '../shared/runtime/sink.ts';

const runtime = sinkRuntimeFromEnv();

export const handler = makeSinkHandler(runtime);

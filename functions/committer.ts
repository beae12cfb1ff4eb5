// Commit Lambda: one table at a time from the FIFO commit queue -> the next manifest version.

import { makeCommitterHandler } from '../shared/ingestion/committer-handler.ts';
import { SERVICE } from '../shared/kernel/names.ts';
import { committerRuntimeFromEnv } from '../shared/runtime/committer.ts';

const runtime = committerRuntimeFromEnv(SERVICE.committer);

export const handler = makeCommitterHandler(runtime);

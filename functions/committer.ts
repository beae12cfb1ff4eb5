// Commit Lambda: one table at a time from the FIFO commit queue -> the next manifest version.
import { committerRuntimeFromEnv } from '../shared/aws/runtime.ts';
import { makeCommitterHandler } from '../shared/handlers/committer-handler.ts';
import { SERVICE } from '../shared/names.ts';
import { groupLimitsFromEnv } from '../shared/usecases/commit-group.ts';

const runtime = committerRuntimeFromEnv(SERVICE.committer);

export const handler = makeCommitterHandler({ ...runtime, group: groupLimitsFromEnv(process.env) });

// A local backfill run in the background (`inlet backfill start` without --wait): runs the execution and
// its continuations, writing records to .inlet/backfills/, then exits.

import { localExecutor } from './backfill/local.ts';
import { resolveTarget } from './target.ts';

const [name, input] = process.argv.slice(2);
if (!name || !input) {
  console.error('usage: backfill-worker <execution name> <input JSON>');
  process.exit(2);
}
const target = await resolveTarget({});
const executor = localExecutor(target);
await executor.start(JSON.parse(input), name);
const chain = await executor.waitForRun(name);
await executor.close();
process.exit(chain.at(-1)?.status === 'SUCCEEDED' ? 0 : 1);

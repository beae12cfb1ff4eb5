/**
 * Another Delta writer on a bronze table, as delta-rs with `aws_conditional_put` would be: it reads the
 * table, then creates the next log entry with `If-None-Match: *`, and gives up its round when someone got
 * there first. What it writes is maintenance a user runs on a bronze table: a logged VACUUM (commitInfo
 * only), `SET TBLPROPERTIES` (the metaData again, one property changed) and an `OPTIMIZE` of one file (its
 * bytes copied to a new name, the old removed: the same rows, `dataChange: false`).
 */
import { loadSnapshot } from '../../shared/bronze/snapshot.ts';
import { fromBody } from './fakes/bronze.ts';
import type { Worker } from './scheduler.ts';
import type { World } from './world.ts';

const line = (action: object) => JSON.stringify(action);

export async function foreignCommit(
  world: World,
  worker: Worker,
  prefix: string,
  round: number,
): Promise<string> {
  const delta = world.foreignDelta(worker, prefix);
  const kind = world.foreignRng.pick(['vacuum', 'properties', 'optimize'] as const);
  const { state } = await loadSnapshot(delta);
  // Not a table yet: nothing to maintain.
  if (state.version < 0 || !state.metaData) return 'skipped: no table yet';
  const info = line({
    commitInfo: {
      timestamp: world.scheduler.now,
      operation: kind.toUpperCase(),
      engineInfo: 'delta-rs:foreign',
    },
  });
  let body = `${info}\n`;
  if (kind === 'properties') {
    const configuration = { ...state.metaData.configuration, 'foreign.round': String(round) };
    body += `${line({ metaData: { ...state.metaData, configuration } })}\n`;
  } else if (kind === 'optimize') {
    const adds = [...state.adds.values()];
    if (adds.length === 0) return 'skipped: no file';
    const old = world.foreignRng.pick(adds);
    const key = `${prefix}/${old.path}`;
    const bytes = await world.aws.send(worker, 's3', `get ${key}`, () => world.bucket.get(key));
    // In the file's own partition directory, as a compaction keeps it.
    const slash = old.path.lastIndexOf('/') + 1;
    const path = `${old.path.slice(0, slash)}part-foreign-${worker.name}-${round}-${old.path.slice(slash)}`;
    await delta.putDataFile(path, fromBody(bytes));
    body += `${line({ remove: { path: old.path, deletionTimestamp: world.scheduler.now, dataChange: false } })}\n`;
    body += `${line({ add: { ...old, path, dataChange: false } })}\n`;
  }
  const put = await delta.putCommitIfAbsent(state.version + 1, body);
  return `${kind} at ${state.version + 1}: ${put}`;
}

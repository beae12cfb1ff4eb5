/**
 * Optimize's and vacuum's invariants (docs/protocol.md "Bronze optimize and vacuum"), read from the fakes'
 * raw state after every step of the optimize scenario:
 * - O-I1: a commit that rewrites files (operation OPTIMIZE, ours or another writer's) removes files whose rows
 *   are exactly the rows of the files it adds, each once;
 * - O-I2: every file live at the latest version is there;
 * - V-I1: after a vacuum deleted something, every file of every version that was the latest at some time within
 *   the retention is still there (time travel within the retention works).
 * Rows lost or doubled across the whole table are checkDeltaComplete's (D3) at the end.
 */
import { logKey } from '../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState, type LogState } from '../../shared/bronze/log-state.ts';
import { bronzeTables, rowsOfFile, same } from './bronze-checks.ts';
import { VACUUM_RETENTION_MS, type World } from './world.ts';

/** Workers' clocks are skewed by up to a second: the check gives vacuum that much benefit of the doubt. */
const SKEW_MS = 2_000;

interface Progress {
  through: number;
  readonly state: LogState;
  deletesSeen: number;
}
const progress = new WeakMap<World, Map<string, Progress>>();

export async function checkMaintenance(world: World): Promise<string[]> {
  const violations: string[] = [];
  const tables = progress.get(world) ?? new Map<string, Progress>();
  progress.set(world, tables);
  for (const { name, root, commits } of bronzeTables(world)) {
    const p = tables.get(name) ?? { through: -1, state: emptyLogState(), deletesSeen: 0 };
    tables.set(name, p);
    for (const d of commits) {
      if (d <= p.through) continue;
      const text = world.bucket.get(`${root}${logKey(d)}`);
      const before = new Set(p.state.adds.keys());
      applyCommit(p.state, d, text);
      p.through = d;
      if (!/"operation":"OPTIMIZE"/.test(text)) continue;
      const removed = [...before].filter((path) => !p.state.adds.has(path));
      const added = [...p.state.adds.keys()].filter((path) => !before.has(path));
      const rows = async (paths: string[]) => {
        const out: string[] = [];
        for (const path of paths) {
          if (!world.bucket.objects.has(`${root}${path}`)) return undefined;
          out.push(...(await rowsOfFile(world, `${root}${path}`)));
        }
        return out;
      };
      const [gone, come] = [await rows(removed), await rows(added)];
      if (!gone || !come)
        violations.push(`O-I1: ${name} optimize at Delta ${d} names a file that is not there`);
      else if (!same(gone, come) || new Set(come).size !== come.length)
        violations.push(
          `O-I1: ${name} optimize at Delta ${d} removes ${gone.length} rows and adds ${come.length}, not the same`,
        );
    }
    for (const path of p.state.adds.keys())
      if (!world.bucket.objects.has(`${root}${path}`))
        violations.push(`O-I2: ${name} Delta ${p.through} names ${path}, which is not there`);
    if (world.bucket.deletes !== p.deletesSeen) {
      p.deletesSeen = world.bucket.deletes;
      violations.push(...timeTravel(world, name, root, commits));
    }
  }
  return [...new Set(violations)];
}

/** V-I1: the files of every version the latest at some time within the retention are all there. */
function timeTravel(world: World, name: string, root: string, commits: readonly number[]): string[] {
  const violations: string[] = [];
  const state = emptyLogState();
  const since = world.scheduler.now - VACUUM_RETENTION_MS + SKEW_MS;
  for (const d of commits) {
    applyCommit(state, d, world.bucket.get(`${root}${logKey(d)}`));
    const next = world.bucket.modified.get(`${root}${logKey(d + 1)}`);
    if (next !== undefined && next < since) continue;
    for (const path of state.adds.keys())
      if (!world.bucket.objects.has(`${root}${path}`))
        violations.push(
          `V-I1: ${name} Delta ${d} (within the retention) names ${path}, which vacuum deleted`,
        );
  }
  return violations;
}

/**
 * cleanSource's invariants in the clean scenario (world.ts), read from the fakes' raw state:
 * C1 a write cleanSource removed was read: its rows are in a Delta table (no write deleted that no table
 *    read), and a moved write is in the archive, the only write ever at its archive key;
 * C2 (at the end) every version of every cleanSource table was cleaned, and no landing file written once
 *    is left that a table read as its manifest names it (the clean did not just give up).
 * Rows lost from a table (a file it found missing because another table's clean removed it first) are the
 * D2/D3 checks': a Delta version must hold one write's rows of each of its files.
 */

import { sameETag } from '../../shared/bronze/landing-write.ts';
import { sourceUrl } from '../../shared/bronze/version-reads.ts';
import { cleanCursorKey } from '../../shared/ingestion/ledger-keys.ts';
import { bronzeTables, deltaRows, manifestOf, rowsOfBody, same } from './bronze-checks.ts';
import { etagOf } from './fakes/landing.ts';
import type { World } from './world.ts';

export function checkCleanSafety(world: World): string[] {
  const violations: string[] = [];
  for (const removal of world.removals) {
    if (removal.archivedAt === undefined) continue;
    const writes = new Set(world.archive.history.get(removal.archivedAt) ?? []);
    if (!writes.has(removal.body) || writes.size > 1)
      violations.push(
        `C1: archive ${removal.archivedAt} holds ${writes.size} write(s), not the one moved there`,
      );
  }
  return [...new Set(violations)];
}

export async function checkCleanComplete(world: World): Promise<string[]> {
  if (world.scenario !== 'clean') return [];
  const violations: string[] = [];
  const tables = bronzeTables(world);
  const rows = new Map<string, string[]>();
  for (const view of tables) rows.set(view.name, await deltaRows(world, view));
  /** Whether `table` read exactly `body` of `key` in one of its versions. */
  const read = (table: string, key: string, body: string) => {
    const all = rows.get(table) ?? [];
    const versions = new Set(
      all
        .filter((r) => r.startsWith(`${sourceUrl({ bucket: 'landing', key })}|`))
        .map((r) => r.slice(r.lastIndexOf('|v') + 2)),
    );
    return [...versions].some((v) => {
      const ofVersion = all.filter(
        (r) => r.startsWith(`${sourceUrl({ bucket: 'landing', key })}|`) && r.endsWith(`|v${v}`),
      );
      return same(ofVersion, rowsOfBody(key, body, Number(v)));
    });
  };
  for (const removal of world.removals) {
    if (!tables.some((t) => read(t.name, removal.key, removal.body)))
      violations.push(`C1: cleanSource removed a write of ${removal.key} that no table read`);
  }
  for (const table of world.config.tables) {
    if (!table.bronze?.cleanSource) continue;
    let head = 0;
    while (manifestOf(world, table.name, head + 1)) head += 1;
    const cleaned = (world.db.get(cleanCursorKey(table.name))?.cleanedVersion as number | undefined) ?? 0;
    if (cleaned !== head) violations.push(`C2: ${table.name} cleaned through version ${cleaned} of ${head}`);
    // Only keys written once: a rewritten key may hold a write made after its clean ran (with the first
    // write's bytes, even), which the clean rightly never saw; the rewrites are C1's to judge.
    for (let v = 1; v <= head; v++) {
      for (const ref of manifestOf(world, table.name, v)?.files ?? []) {
        const once = (world.landing.history.get(ref.key)?.length ?? 0) === 1;
        const body = once ? world.landing.objects.get(ref.key) : undefined;
        if (body === undefined || !sameETag(etagOf(body), ref.eTag) || !read(table.name, ref.key, body))
          continue;
        violations.push(
          `C2: ${ref.key} is still in landing though ${table.name} read it as its manifest names it`,
        );
      }
    }
  }
  return [...new Set(violations)];
}

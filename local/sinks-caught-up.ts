import type { SinkCursorStore } from '../shared/bronze/ports.ts';

/**
 * Every bronze table holds its manifest head wholly: its sink cursor's manifest version (the last one
 * wholly in the Delta table) is the head. Not its Delta version: a version written in parts is several
 * commits and another writer's commits take versions too (docs/bronze.md, "Exactly once"), so "Delta
 * version = head - 1" both says done mid-version and never says done after a compaction.
 */
export async function sinksCaughtUp(
  tables: readonly string[],
  headOf: (table: string) => Promise<number>,
  cursors: Pick<SinkCursorStore, 'get'>,
): Promise<boolean> {
  for (const table of tables) {
    const cursor = await cursors.get(table);
    if (cursor.manifestVersion !== (await headOf(table))) return false;
  }
  return true;
}

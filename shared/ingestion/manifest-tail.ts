import type { BatchStore } from './batch-store.ts';
import type { Manifest } from './manifest.ts';

/**
 * Committed versions of a table in order, from `fromVersion` on, until the first one not yet committed.
 * Versions are contiguous (I3), so a missing manifest means "caught up", never "skip". A consumer that keeps
 * the last version it finished (its checkpoint) and restarts from the next one reads each version once.
 *
 * @example
 * for await (const manifest of tailVersions(store, 'orders', checkpoint + 1)) {
 *   await load(manifest);
 *   checkpoint = manifest.version;
 * }
 */
export async function* tailVersions(
  store: Pick<BatchStore, 'getManifest'>,
  table: string,
  fromVersion: number,
): AsyncGenerator<Manifest> {
  for (let version = Math.max(1, fromVersion); ; version++) {
    const manifest = await store.getManifest(table, version);
    if (!manifest) return;
    yield manifest;
  }
}

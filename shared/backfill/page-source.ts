// Where a partition's pages come from, and how its cursor moves: a bucket listing (ListObjectsV2, or
// ListObjectVersions for allowOverwrites tables) over a key range, or the rows of an S3 Inventory report's
// data files. The step (shared/backfill/backfill.ts) reads pages the same way from either.

import { advanceInventory, inventoryEnded, reportOf } from './inventory-source.ts';
import {
  inRange,
  isInventoryPartition,
  listingPrefix,
  type Partition,
  pastRange,
  startAfterFor,
} from './partitions.ts';
import type { InventoryReader, ListedObject, ListPage, ObjectLister } from './ports.ts';
import type { BackfillPlan } from './request.ts';
import { InvalidBackfillInput } from './request.ts';

export interface PageSource {
  /** Up to `limit` entries from the partition's cursor. */
  read(partition: Partition, limit: number): Promise<ListPage>;
  /** The objects of a page that are the partition's (a listing page can run past its range). */
  own(partition: Partition, page: ListPage): ListedObject[];
  /** Whether the page ended the partition. */
  ended(partition: Partition, page: ListPage): boolean;
  /** The partition after the page: its cursor past everything the page returned of it. */
  advance(partition: Partition, page: ListPage): Partition;
}

export function pageSource(
  deps: { readonly lister: ObjectLister; readonly inventory?: InventoryReader },
  plan: BackfillPlan,
  partition: Partition,
  versions: boolean,
): PageSource {
  if (isInventoryPartition(partition)) return inventorySource(deps.inventory, plan);
  return {
    read: (p, limit) =>
      deps.lister.list({
        bucket: plan.bucket,
        prefix: listingPrefix(p),
        startAfter: startAfterFor(p),
        ...(p.startAfter !== undefined && p.versionIdMarker !== undefined
          ? { versionIdMarker: p.versionIdMarker }
          : {}),
        limit,
        versions,
      }),
    own: (p, page) => page.objects.filter((o) => inRange(p, o.key)),
    // Past the range: an object, or where the next page would start (a versions page past the range can
    // hold only delete markers and older versions, and list no object at all).
    ended: (p, page) =>
      !page.more ||
      page.objects.some((o) => pastRange(p, o.key)) ||
      (page.lastKey !== undefined && pastRange(p, page.lastKey)),
    advance: (p, page) => {
      const { versionIdMarker: _, ...rest } = p;
      // Where the next page starts (a versions page may end on a key with only older versions), unless
      // past the range, which ends the partition.
      if (page.lastKey !== undefined && !pastRange(p, page.lastKey))
        return {
          ...rest,
          startAfter: page.lastKey,
          ...(page.lastVersionId !== undefined ? { versionIdMarker: page.lastVersionId } : {}),
        };
      const last = page.objects.filter((o) => inRange(p, o.key)).at(-1)?.key;
      return last === undefined ? p : { ...rest, startAfter: last };
    },
  };
}

function inventorySource(inventory: InventoryReader | undefined, plan: BackfillPlan): PageSource {
  const location = plan.inventory;
  if (!inventory || !location) throw new Error('this backfill function reads no S3 Inventory reports');
  const filter = { bucket: plan.bucket, prefix: plan.listPrefix };
  return {
    read: async (p, limit) => {
      const manifest = await reportOf(inventory, location, p.report);
      const file = manifest.files[p.file ?? 0];
      if (!file)
        throw new InvalidBackfillInput([`partitions: no data file ${p.file} in the report's manifest`]);
      const request = { bucket: location.bucket, columns: location.columns ?? manifest.columns, ...file };
      return inventory.page(request, filter, p.row ?? 0, limit);
    },
    own: (_p, page) => [...page.objects],
    ended: inventoryEnded,
    advance: advanceInventory,
  };
}

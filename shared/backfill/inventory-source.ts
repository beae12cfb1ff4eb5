// An S3 Inventory backfill's partitions: ranges of the report's data files, each read a page of rows at a
// time (the cursor: the file and the row), in place of key ranges listed from S3.
import type { InventoryManifest } from './inventory-report.ts';
import { InventoryReportError } from './inventory-report.ts';
import type { Partition } from './partitions.ts';
import type { InventoryLocation, InventoryReader, ListPage } from './ports.ts';

/**
 * The report's data files cut into at most `count` runs of files that follow each other, as even as whole
 * files allow: a partition is a range of files, not one per file, so a report of any number of files
 * makes a bounded state.
 */
export function inventoryPartitions(manifest: InventoryManifest, prefix: string, count: number): Partition[] {
  const files = manifest.files.length;
  const n = Math.max(1, Math.min(files, count));
  return Array.from({ length: files === 0 ? 0 : n }, (_, i) => ({
    prefix,
    report: manifest.md5,
    file: Math.floor((i * files) / n),
    fileEnd: Math.floor(((i + 1) * files) / n),
    row: 0,
  }));
}

/** What is wrong with the partitions a resume names, for this report. */
export function givenInventoryProblems(given: readonly Partition[], manifest: InventoryManifest): string[] {
  const problems: string[] = [];
  for (const p of given) {
    if (p.report !== manifest.md5)
      problems.push(
        `partitions: a partition of the report whose manifest has MD5 ${p.report ?? '(none)'}, not this one (${manifest.md5}): resume with the inventory it came from`,
      );
    else if ((p.fileEnd ?? 0) > manifest.files.length || (p.file ?? 0) >= (p.fileEnd ?? 0))
      problems.push(
        `partitions: files ${p.file}-${p.fileEnd} are not a range of the report's ${manifest.files.length} data files`,
      );
  }
  return [...new Set(problems)];
}

/** The partition after a page: on in its file, or on to the next file once this one has no rows left. */
export function advanceInventory(partition: Partition, page: ListPage): Partition {
  if (page.more) return { ...partition, row: (partition.row ?? 0) + (page.rows ?? page.objects.length) };
  return { ...partition, file: (partition.file ?? 0) + 1, row: 0 };
}

/** Whether a page ended the partition: the last row of its last file. */
export function inventoryEnded(partition: Partition, page: ListPage): boolean {
  return !page.more && (partition.file ?? 0) + 1 >= (partition.fileEnd ?? 0);
}

/**
 * The report a partition names, never another one written at the same key since: a cached copy whose MD5
 * differs is read again, once, and a manifest that still differs is refused.
 */
export async function reportOf(
  inventory: InventoryReader,
  location: InventoryLocation,
  md5: string | undefined,
): Promise<InventoryManifest> {
  let manifest = await inventory.manifest(location);
  if (md5 === undefined || manifest.md5 === md5) return manifest;
  inventory.forget(location);
  manifest = await inventory.manifest(location);
  if (manifest.md5 !== md5)
    throw new InventoryReportError(
      `inventory manifest s3://${location.bucket}/${location.key} is not the report this run reads (MD5 ${manifest.md5}, not ${md5}): it was replaced; start a new run`,
    );
  return manifest;
}

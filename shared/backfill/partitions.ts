import * as z from '../kernel/zod.ts';
import type { ObjectLister } from './ports.ts';

/**
 * One slice of a backfill that runs on its own, in parallel with the others (one iteration of the state
 * machine's Map): the keys under `prefix` in [from, to), or the rows of one S3 Inventory data file. Its
 * cursor is its own, so a failed run resumes each partition where it stopped.
 */
export const partitionSchema = z.strictObject({
  /** Listing prefix (S3 Prefix): the table's, or a narrower one the reconcile window picked. */
  prefix: z.string(),
  /** First key of the range (inclusive); none: from the start of the prefix. */
  from: z.optional(z.string()),
  /** End of the range (exclusive); none: to the end of the prefix. */
  to: z.optional(z.string()),
  /** Last key done: the next listing starts after it. */
  startAfter: z.optional(z.string()),
  /**
   * A versions listing's cursor is a pair: `startAfter` is S3's `NextKeyMarker` and this its
   * `NextVersionIdMarker`, passed back together as S3 documents them.
   */
  versionIdMarker: z.optional(z.string()),
  /**
   * S3 Inventory partitions read data files instead of listing: `file` (the one being read, an index into
   * the manifest's `files`) up to `fileEnd` (exclusive), of the report whose manifest has the MD5 `report`.
   * Indices, not keys, so a partition's size does not grow with the report.
   */
  report: z.optional(z.string().check(z.regex(/^[0-9a-f]{32}$/, 'must be an MD5 (32 hex digits)'))),
  file: z.optional(z.int().check(z.nonnegative())),
  fileEnd: z.optional(z.int().check(z.positive())),
  /** Rows of `file` already done. */
  row: z.optional(z.int().check(z.nonnegative())),
});
export type Partition = z.infer<typeof partitionSchema>;

/** Whether a partition reads S3 Inventory data files (else it lists keys). */
export function isInventoryPartition(partition: Partition): boolean {
  return partition.file !== undefined;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** S3 lists keys in UTF-8 binary order; JS compares UTF-16 code units, which differ above U+FFFF. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(utf8(a), utf8(b));
}

/**
 * A StartAfter for a range that starts at `from` inclusive: the key with its last code unit lowered sorts
 * just before `from`; keys between the two (rare: `from` minus one char plus more) are cut by the caller.
 */
export function startAfterFor(partition: Partition): string | undefined {
  if (partition.startAfter !== undefined) return partition.startAfter;
  const from = partition.from;
  if (!from) return undefined;
  const last = from.charCodeAt(from.length - 1);
  return last > 0 ? from.slice(0, -1) + String.fromCharCode(last - 1) : from.slice(0, -1) || undefined;
}

/**
 * The Prefix to list a partition with: every key in [from, to) starts with the longest common prefix of
 * `from` and `to` (a key differing earlier sorts before `from` or after `to`), so S3 is asked for that
 * narrower prefix: fewer keys to skip past when the partition starts.
 */
export function listingPrefix(partition: Partition): string {
  const { from, to, prefix } = partition;
  if (from === undefined || to === undefined) return prefix;
  let i = 0;
  while (i < from.length && i < to.length && from[i] === to[i]) i++;
  // A surrogate pair cut in half is not a prefix S3 can take.
  if (i > 0 && /[\ud800-\udbff]/.test(from[i - 1] ?? '')) i--;
  const common = from.slice(0, i);
  return common.length > prefix.length && common.startsWith(prefix) ? common : prefix;
}

/** Whether `key` lies in the partition's range. */
export function inRange(partition: Partition, key: string): boolean {
  if (partition.from !== undefined && compareKeys(key, partition.from) < 0) return false;
  if (partition.to !== undefined && compareKeys(key, partition.to) >= 0) return false;
  return true;
}

/** Whether `key` is at or past the end of the range: listing further cannot find more. */
export function pastRange(partition: Partition, key: string): boolean {
  return partition.to !== undefined && compareKeys(key, partition.to) >= 0;
}

export interface DiscoverOptions {
  readonly bucket: string;
  readonly prefix: string;
  /** Partitions wanted: more than the concurrency, so a slow one does not hold the round alone. */
  readonly target: number;
  /** Levels of `/` to descend at most. @default 3 */
  readonly maxDepth?: number;
}

/**
 * Key ranges that cover every key under `prefix`, split at common prefixes (S3 ListObjectsV2 with a
 * Delimiter), descending a level while there are fewer than `target`. Each boundary starts a range that
 * ends where the next begins, the first from the start and the last to the end: no key is missed or
 * listed twice, whatever the tree looks like. A flat prefix (no `/` below it) is one range.
 */
export async function discoverRanges(lister: ObjectLister, options: DiscoverOptions): Promise<Partition[]> {
  let level = [options.prefix];
  for (let depth = 0; depth < (options.maxDepth ?? 3) && level.length < options.target; depth++) {
    const children = await Promise.all(
      level.map(async (p) => {
        const found = await lister.commonPrefixes({ bucket: options.bucket, prefix: p, delimiter: '/' });
        return found.length > 0 ? found : [p];
      }),
    );
    const next = children.flat();
    if (next.length === level.length) break;
    level = next;
  }
  const boundaries = [...new Set(level)].filter((p) => p !== options.prefix).sort(compareKeys);
  // The first range starts at the beginning, so it needs no boundary of its own. More prefixes than
  // wanted: evenly spaced ones, prefixes being the unit of balance.
  const wanted = Math.min(boundaries.length, options.target);
  const chosen = [
    ...new Set(
      Array.from(
        { length: wanted - 1 },
        (_, k) => boundaries[Math.floor(((k + 1) * boundaries.length) / wanted)] as string,
      ),
    ),
  ];
  const ranges: Partition[] = [];
  let from: string | undefined;
  for (const boundary of chosen) {
    ranges.push({ prefix: options.prefix, ...(from ? { from } : {}), to: boundary });
    from = boundary;
  }
  ranges.push({ prefix: options.prefix, ...(from ? { from } : {}) });
  return ranges;
}

/**
 * The first string after every string that starts with `prefix` (in UTF-8 byte order, which is code point
 * order), or undefined when none is (the prefix is all U+10FFFF).
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()?.codePointAt(0) ?? 0;
    if (last < 0x10ffff) {
      // UTF-8 has no surrogate code points: after U+D7FF comes U+E000.
      points.push(String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1));
      return points.join('');
    }
  }
  return undefined;
}

/**
 * One partition doing the work of two that follow each other (`a` before `b`): from `a`'s cursor to `b`'s
 * end. It may cover again what lay between them or what `b` had done (a done partition, another day of a
 * reconcile window); re-listed keys are found in the ledger or claimed once by the batcher, so that costs
 * look-ups, never a duplicate.
 */
export function coalesce(a: Partition, b: Partition): Partition {
  if (isInventoryPartition(a) || isInventoryPartition(b)) {
    return {
      prefix: a.prefix,
      ...(a.report !== undefined ? { report: a.report } : {}),
      file: a.file ?? 0,
      fileEnd: Math.max(a.fileEnd ?? 0, b.fileEnd ?? 0),
      row: a.row ?? 0,
    };
  }
  let common = 0;
  while (common < a.prefix.length && common < b.prefix.length && a.prefix[common] === b.prefix[common])
    common++;
  if (common > 0 && /[\ud800-\udbff]/.test(a.prefix[common - 1] ?? '')) common--;
  const prefix = a.prefix.slice(0, common);
  // A window prefix (no from/to) is the range of the keys that start with it.
  const from = a.from ?? (a.prefix !== prefix ? a.prefix : undefined);
  const to = b.to ?? (b.prefix !== prefix ? prefixEnd(b.prefix) : undefined);
  return {
    prefix,
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(a.startAfter !== undefined ? { startAfter: a.startAfter } : {}),
    ...(a.versionIdMarker !== undefined ? { versionIdMarker: a.versionIdMarker } : {}),
  };
}

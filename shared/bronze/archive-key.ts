import type { ObjectRef } from '../ingestion/model.ts';
import { bareETag, versionOf } from './landing-write.ts';
import type { ArchiveTarget } from './ports.ts';

/**
 * Where cleanSource's `move` puts a write: `<moveTo prefix>/<source bucket>/<key>`, and for a table whose
 * files are writes (allowOverwrites) `<moveTo prefix>/<source bucket>/v=<version id>/<key>` (or
 * `e=<ETag>/` without a version), so neither two landing buckets nor two writes of one key overwrite each
 * other in an unversioned archive. The key comes last and unchanged, so a reprocess table can read the
 * archive with the landing table's suffix or glob.
 * @example archiveKey({ bucket: 'landing', key: 'orders/a.json', ... }, { prefix: 'old', perWrite: false })
 *   // 'old/landing/orders/a.json'
 */
export function archiveKey(
  ref: Pick<ObjectRef, 'bucket' | 'key' | 'versionId' | 'eTag'>,
  to: Pick<ArchiveTarget, 'prefix' | 'perWrite'>,
): string {
  const version = versionOf(ref);
  const eTag = bareETag(ref.eTag);
  const write = !to.perWrite ? '' : version ? `v=${version}/` : eTag ? `e=${eTag}/` : '';
  return `${archivePrefix(to.prefix, ref.bucket)}${write}${ref.key}`;
}

/** The part of every archive key of `bucket`'s files that does not depend on the file. */
export function archivePrefix(moveToPrefix: string, bucket: string): string {
  return `${moveToPrefix === '' ? '' : `${moveToPrefix}/`}${bucket}/`;
}

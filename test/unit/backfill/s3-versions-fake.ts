import type { ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { compareKeys } from '../../../shared/backfill/partitions.ts';

/** One entry of a versioned bucket: an object version or a delete marker. */
export interface FakeVersion {
  readonly key: string;
  readonly versionId: string;
  readonly isLatest: boolean;
  readonly deleteMarker?: boolean;
}

/**
 * How S3 reads and writes the pagination markers. ListObjectVersions documents `NextKeyMarker` /
 * `NextVersionIdMarker` as "the first key [version] not returned", to be passed back as `key-marker` /
 * `version-id-marker` (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html); what S3
 * (and moto) answer is the last entry returned, the pair then meaning "after this one". Either way a
 * `key-marker` alone lists the keys after it, as `StartAfter` does.
 * - `last-returned`: Next* name the last entry returned; (K, V) resumes after it.
 * - `first-not-returned`: Next* name the first entry not returned; (K, V) resumes at it.
 */
export type MarkerReading = 'last-returned' | 'first-not-returned';

/**
 * ListObjectVersions over entries in memory: Prefix, KeyMarker, VersionIdMarker, MaxKeys (counting versions
 * and delete markers alike, as S3 does), each key's versions newest first. Records every request.
 */
export function versionsS3(entries: readonly FakeVersion[], reading: MarkerReading) {
  // Stable sort: a key's versions keep their given order (newest first).
  const sorted = [...entries].sort((a, b) => compareKeys(a.key, b.key));
  const requests: ListObjectVersionsCommand['input'][] = [];
  const client = {
    send: async (command: ListObjectVersionsCommand) => {
      const input = command.input;
      requests.push(input);
      const prefix = input.Prefix ?? '';
      const candidates = sorted.filter((e) => e.key.startsWith(prefix));
      let start = 0;
      if (input.KeyMarker !== undefined) {
        const marker = input.KeyMarker;
        const at = input.VersionIdMarker
          ? candidates.findIndex((e) => e.key === marker && e.versionId === input.VersionIdMarker)
          : -1;
        if (at >= 0) start = reading === 'last-returned' ? at + 1 : at;
        else start = candidates.findIndex((e) => compareKeys(e.key, marker) > 0);
        if (start < 0) start = candidates.length;
      }
      const max = input.MaxKeys ?? 1000;
      const page = candidates.slice(start, start + max);
      const truncated = start + page.length < candidates.length;
      const next = reading === 'last-returned' ? page.at(-1) : candidates[start + page.length];
      return {
        IsTruncated: truncated,
        ...(truncated ? { NextKeyMarker: next?.key, NextVersionIdMarker: next?.versionId } : {}),
        Versions: page
          .filter((e) => !e.deleteMarker)
          .map((e) => ({
            Key: e.key,
            VersionId: e.versionId,
            IsLatest: e.isLatest,
            Size: 1,
            ETag: `"etag-${e.versionId}"`,
            LastModified: new Date('2026-11-30T00:00:00Z'),
          })),
        DeleteMarkers: page
          .filter((e) => e.deleteMarker)
          .map((e) => ({ Key: e.key, VersionId: e.versionId, IsLatest: e.isLatest })),
      };
    },
  } as unknown as S3Client;
  return { client, requests };
}

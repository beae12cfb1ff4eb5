import type { ObjectRef } from './model.ts';
import { normalizeVersionId } from './version-id.ts';

/** One batch's claimed files, staged in S3 before the batch is sealed. */
export interface StagedList {
  readonly table: string;
  readonly batchId: string;
  readonly files: readonly ObjectRef[];
}

export interface ManifestEntry {
  readonly url: string;
  readonly mandatory: true;
  readonly meta: { readonly content_length: number };
}

/** The manifest contract (docs/protocol.md, "Manifests"); other tools read it. */
export interface Manifest {
  readonly table: string;
  readonly version: number;
  readonly committedAt: string;
  readonly batchIds: readonly string[];
  readonly fileCount: number;
  readonly bytes: number;
  readonly files: ReadonlyArray<ObjectRef>;
  /**
   * Redshift `COPY ... MANIFEST` entries, so a version can be loaded as is. A COPY manifest url is
   * `s3://bucket/key` and cannot name an object version: COPY reads each key's current version when it runs.
   */
  readonly entries: readonly ManifestEntry[];
  /**
   * Present (true) when a file of this version has a versionId (allowOverwrites tables on a versioned
   * bucket): `entries` then load each key's current version, which may be a later write than the one this
   * manifest lists, and two versions of one key in two manifests load the same bytes twice. A consumer that
   * needs the exact bytes reads `files[]` with GetObject `versionId`. Absent otherwise, so manifests without
   * versions keep the contract's shape byte for byte.
   */
  readonly entriesLoadCurrentVersion?: true;
}

export function manifestKey(table: string, version: number): string {
  return `${table}/_manifests/${String(version).padStart(20, '0')}.json`;
}

export function stagedListKey(table: string, batchId: string): string {
  return `_staging/${table}/${batchId}.json`;
}

function byLocation(a: ObjectRef, b: ObjectRef): number {
  if (a.bucket !== b.bucket) return a.bucket < b.bucket ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return (a.versionId ?? a.eTag ?? '') < (b.versionId ?? b.eTag ?? '') ? -1 : 1;
}

/** Files in a canonical order, so the same batch always stages the same bytes. */
export function canonicalFiles(files: readonly ObjectRef[]): ObjectRef[] {
  return files
    .map((f) => ({
      bucket: f.bucket,
      key: f.key,
      size: f.size,
      eTag: f.eTag,
      versionId: normalizeVersionId(f.versionId),
      sequencer: f.sequencer,
      eventTime: f.eventTime,
    }))
    .sort(byLocation);
}

/**
 * A pure function of the reservation and the staged lists, so a committer that crashed after writing it
 * writes the same bytes again. Several lists (group commit) are given in the reservation's batch order,
 * which is `batchIds`; their files are merged in the canonical order (a file is in exactly one list, by
 * the lemma in docs/protocol.md).
 */
export function buildManifest(
  lists: StagedList | readonly StagedList[],
  version: number,
  committedAt: string,
): Manifest {
  const all: readonly StagedList[] = Array.isArray(lists) ? lists : [lists as StagedList];
  const [first] = all;
  if (!first) throw new Error('a manifest covers at least one staged list');
  const files = canonicalFiles(all.flatMap((list) => list.files));
  return {
    table: first.table,
    version,
    committedAt,
    batchIds: all.map((list) => list.batchId),
    fileCount: files.length,
    bytes: files.reduce((sum, f) => sum + f.size, 0),
    files,
    entries: files.map((f) => ({
      url: `s3://${f.bucket}/${f.key}`,
      mandatory: true,
      meta: { content_length: f.size },
    })),
    ...(files.some((f) => f.versionId !== null) ? { entriesLoadCurrentVersion: true as const } : {}),
  };
}

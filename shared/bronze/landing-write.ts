/**
 * How one write of a landing key is named to S3, and how S3 says it is not there: shared by the sink's
 * reads (`S3SourceObjects`) and cleanSource's deletes and copies (`S3LandingCleaner`), which must name the
 * same write (docs/bronze.md, "Which write the sink reads, and which cleanSource removes").
 */

import type { ObjectRef } from '../ingestion/model.ts';
import { normalizeVersionId } from '../ingestion/version-id.ts';

/** An ETag without its quotes: S3 events carry it bare, responses and listings quoted. */
export function bareETag(eTag: string | null | undefined): string | undefined {
  if (!eTag) return undefined;
  return eTag.replace(/^"(.*)"$/, '$1');
}

/**
 * The ETag as an `If-Match` / `x-amz-copy-source-if-match` value: quoted, as RFC 7232 entity tags are (S3
 * compares the quoted form; moto 5.2.5's HeadObject only matches it quoted).
 */
export function quotedETag(eTag: string | null | undefined): string | undefined {
  const bare = bareETag(eTag);
  return bare === undefined ? undefined : `"${bare}"`;
}

export function sameETag(a: string | null | undefined, b: string | null | undefined): boolean {
  const x = bareETag(a);
  return x !== undefined && x === bareETag(b);
}

/** The version id as the manifest should name it: none for an unversioned or suspended bucket's `"null"`. */
export const versionOf = (ref: Pick<ObjectRef, 'versionId'>) => normalizeVersionId(ref.versionId);

interface S3ErrorShape {
  readonly name?: string;
  readonly Code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
}

const statusOf = (error: unknown) => (error as S3ErrorShape).$metadata?.httpStatusCode;

/**
 * What a 404 or 412 from S3 says about a write. A HEAD has no body, so its 404 names no code ('NotFound'):
 * `unknown404` then, and the caller asks with a GET to tell a missing key from a missing bucket.
 */
export type S3Absence =
  | 'no-such-key'
  | 'no-such-version'
  | 'no-such-bucket'
  | 'precondition-failed'
  | 'unknown-404';

export function absenceOf(error: unknown): S3Absence | undefined {
  const e = error as S3ErrorShape;
  const code = e.Code ?? e.name;
  if (code === 'NoSuchKey') return 'no-such-key';
  if (code === 'NoSuchVersion') return 'no-such-version';
  if (code === 'NoSuchBucket') return 'no-such-bucket';
  if (code === 'PreconditionFailed' || statusOf(error) === 412) return 'precondition-failed';
  if (statusOf(error) === 404) return 'unknown-404';
  return undefined;
}

/**
 * The one place a versionId is normalised, for every way an object reaches Inlet: S3 notifications (plain
 * or in an SNS envelope), EventBridge events, and the backfill lister. An object written while the bucket's
 * versioning is suspended (or before it was ever enabled) has the version id "null" (AmazonS3 user guide,
 * AddingObjectstoVersionSuspendedBuckets), which notifications and ListObjectVersions spell as the string
 * "null"; an unversioned bucket's notification has no versionId at all. Both mean "no version": if one path
 * kept the string and another did not, an allowOverwrites table would give the same object two identities
 * and ingest it twice.
 * @example normalizeVersionId('null') === null
 */
export function normalizeVersionId(versionId: string | null | undefined): string | null {
  if (versionId === undefined || versionId === null || versionId === '' || versionId === 'null') return null;
  return versionId;
}

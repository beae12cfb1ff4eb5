import { ListObjectsV2Command, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import { stripQuotes } from '../../ingestion/parse-message.ts';
import { normalizeVersionId } from '../../ingestion/version-id.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import { compareKeys } from '../partitions.ts';
import type { ListedObject, ListPage, ListRequest, ObjectLister, PrefixRequest } from '../ports.ts';

/** Partitioning stops descending rather than list more folders than this under one prefix. */
const MAX_PREFIX_PAGES = 10;

interface S3Entry {
  readonly Key?: string;
  readonly Size?: number;
  readonly ETag?: string;
  readonly LastModified?: Date;
}

function listed(entry: S3Entry, versionId: string | null): ListedObject {
  return {
    key: entry.Key ?? '',
    size: entry.Size ?? 0,
    eTag: stripQuotes(entry.ETag),
    versionId,
    lastModified: (entry.LastModified ?? new Date(0)).toISOString(),
  };
}

/**
 * ListObjectsV2 pages, or ListObjectVersions for tables whose identity includes the versionId (a live
 * event of a versioned bucket carries it; a plain listing does not, and the identities would differ).
 * The cursor is always the last key, so a run resumes with `startAfter` after a failure.
 */
export class S3ObjectLister implements ObjectLister {
  constructor(private readonly client: S3Client) {}

  async list(request: ListRequest): Promise<ListPage> {
    try {
      return request.versions ? await this.listVersions(request) : await this.listObjects(request);
    } catch (error) {
      throw classifyAwsError(`list s3://${request.bucket}/${request.prefix}`, error);
    }
  }

  async commonPrefixes(request: PrefixRequest): Promise<string[]> {
    const prefixes: string[] = [];
    let token: string | undefined;
    try {
      for (let page = 0; page < MAX_PREFIX_PAGES; page++) {
        const result = await this.client.send(
          new ListObjectsV2Command({
            Bucket: request.bucket,
            Prefix: request.prefix || undefined,
            Delimiter: request.delimiter,
            ContinuationToken: token,
          }),
        );
        for (const p of result.CommonPrefixes ?? []) if (p.Prefix) prefixes.push(p.Prefix);
        token = result.NextContinuationToken;
        if (!token) break;
      }
    } catch (error) {
      throw classifyAwsError(`list prefixes of s3://${request.bucket}/${request.prefix}`, error);
    }
    return prefixes;
  }

  private async listObjects(request: ListRequest): Promise<ListPage> {
    const page = await this.client.send(
      new ListObjectsV2Command({
        Bucket: request.bucket,
        Prefix: request.prefix || undefined,
        StartAfter: request.startAfter,
        MaxKeys: request.limit,
      }),
    );
    const objects = (page.Contents ?? []).map((o) => listed(o, null));
    return { objects, lastKey: objects.at(-1)?.key, more: page.IsTruncated === true };
  }

  private async listVersions(request: ListRequest): Promise<ListPage> {
    const page = await this.client.send(
      new ListObjectVersionsCommand({
        Bucket: request.bucket,
        Prefix: request.prefix || undefined,
        // A key marker alone lists the keys after it, like StartAfter. A truncated page names where the next
        // starts with NextKeyMarker and NextVersionIdMarker, "to be used" as the key and version-id markers
        // of the next request: the pair is passed back as is, which resumes exactly whether S3 means the
        // last entry returned or the first not returned (its docs say the latter, S3 and moto answer the
        // former). A key's latest version comes first, so a page ending inside a key's older versions has
        // already returned its latest.
        KeyMarker: request.startAfter,
        VersionIdMarker: request.startAfter !== undefined ? request.versionIdMarker : undefined,
        MaxKeys: request.limit,
      }),
    );
    const versions = page.Versions ?? [];
    const objects = versions.filter((v) => v.IsLatest).map((v) => listed(v, normalizeVersionId(v.VersionId)));
    // A page of delete markers or older versions lists nothing: NextKeyMarker still moves the cursor on.
    if (page.IsTruncated && page.NextKeyMarker !== undefined) {
      return {
        objects,
        lastKey: page.NextKeyMarker,
        ...(page.NextVersionIdMarker ? { lastVersionId: page.NextVersionIdMarker } : {}),
        more: true,
      };
    }
    const lastKey = [versions.at(-1)?.Key, page.DeleteMarkers?.at(-1)?.Key]
      .filter((k): k is string => k !== undefined)
      .sort(compareKeys)
      .at(-1);
    return { objects, ...(lastKey !== undefined ? { lastKey } : {}), more: page.IsTruncated === true };
  }
}

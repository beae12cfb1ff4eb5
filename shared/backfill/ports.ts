// The backfill's ports: what its use case (shared/backfill/backfill.ts) needs from S3 listings, S3 Inventory
// reports and the ingest queue. Adapters: aws/s3-lister.ts, aws/s3-inventory-reader.ts, aws/sqs-enqueuer.ts; test doubles in test/unit.
import type { ObjectRef } from '../ingestion/model.ts';
import type { InventoryManifest } from './inventory-report.ts';

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly eTag: string | null;
  readonly versionId: string | null;
  /** ISO-8601 */
  readonly lastModified: string;
}

export interface ListPage {
  readonly objects: readonly ListedObject[];
  /**
   * Where the next page starts: the last key S3 returned, listed or not (a versions page can hold only older
   * versions and delete markers), or a versions listing's `NextKeyMarker`. The cursor.
   */
  readonly lastKey?: string;
  /** A versions listing's `NextVersionIdMarker`: passed back with `lastKey`, as S3 pairs them. */
  readonly lastVersionId?: string;
  /** Whether keys after the last one remain. */
  readonly more: boolean;
  /** Inventory pages: rows read, filtered or not (the cursor). */
  readonly rows?: number;
}

export interface ListRequest {
  readonly bucket: string;
  readonly prefix: string;
  readonly startAfter?: string;
  /** With `startAfter`, a versions listing's `VersionIdMarker`: resume within that key's versions. */
  readonly versionIdMarker?: string;
  /** 1-1000 */
  readonly limit: number;
  /** List object versions (IsLatest only) to learn each object's versionId: allowOverwrites tables. */
  readonly versions: boolean;
}

export interface PrefixRequest {
  readonly bucket: string;
  readonly prefix: string;
  readonly delimiter: string;
}

/** One page of a bucket listing, in key order, resumable from any key. */
export interface ObjectLister {
  list(request: ListRequest): Promise<ListPage>;
  /** The common prefixes one level below `prefix` (what a console shows as folders), in key order. */
  commonPrefixes(request: PrefixRequest): Promise<string[]>;
}

/** Puts files on the ingest queue, where the batcher claims them like any live event. */
export interface Enqueuer {
  enqueue(files: readonly ObjectRef[], origin: { table: string; run: string }): Promise<void>;
}

export interface InventoryLocation {
  readonly bucket: string;
  readonly key: string;
}

/** One data file of a report: where it is, its columns, and what the manifest says of it. */
export interface InventoryFileRequest extends InventoryLocation {
  readonly columns: readonly string[];
  readonly size?: number;
  readonly md5?: string;
}

/** Reads an S3 Inventory report instead of listing the bucket. */
export interface InventoryReader {
  /** The report's manifest, checked against its manifest.checksum. */
  manifest(location: InventoryLocation): Promise<InventoryManifest>;
  /** Forgets a manifest read before, so the next `manifest` reads it again. */
  forget(location: InventoryLocation): void;
  /**
   * Up to `limit` rows of one data file from row `row`: the current objects of `filter.bucket` under
   * `filter.prefix` among them, how many rows were read (the partition's cursor), and whether rows remain.
   */
  page(
    file: InventoryFileRequest,
    filter: { readonly bucket: string; readonly prefix: string },
    row: number,
    limit: number,
  ): Promise<ListPage>;
}

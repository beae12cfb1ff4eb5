import type { RandomAccessObject } from './ports.ts';

/** A data file under a Delta table's root, as a listing gives it. */
export interface ListedFile {
  /** Relative to the table root, as an `add` action names it. */
  readonly path: string;
  readonly size: number;
  /** epoch ms: S3's `LastModified`, when the object was written. */
  readonly lastModified: number;
}

/**
 * The data files of one Delta table (everything under its root but `_delta_log/`): optimize reads them,
 * vacuum lists and deletes them. Apart from `DeltaStore` because only these two use it (and only they are
 * granted reads and deletes of data files).
 */
export interface TableFiles {
  /** Ranged reads of a data file (a row group at a time); throws when it is missing. */
  open(path: string): Promise<RandomAccessObject>;
  /** Every object under the root outside `_delta_log/`, in key order, a page at a time. */
  list(): AsyncIterable<ListedFile>;
  /** Deletes these files (1,000 a call on S3); deleting a file already gone is no error. */
  delete(paths: readonly string[]): Promise<void>;
}

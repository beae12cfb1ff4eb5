import type { ObjectRef } from '../model.ts';
import type { PutIfAbsentResult } from '../storage/batch-store.ts';
import type { TableSchema } from './schema.ts';

/** Landing files, streamed. */
export interface SourceObjects {
  /** The object's bytes, or undefined when it no longer exists (deleted after its event). */
  open(ref: ObjectRef): Promise<AsyncIterable<Uint8Array> | undefined>;
  /**
   * Ranged reads of the object (Parquet keeps its schema in a footer at the end), or undefined when it no
   * longer exists. Shaped as hyparquet's `AsyncBuffer`.
   */
  openRandom(ref: ObjectRef): Promise<RandomAccessObject | undefined>;
}

export interface RandomAccessObject {
  readonly byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer>;
}

/** One Delta table's root: data files and the log. */
export interface DeltaStore {
  /** Overwrites: a replay writes the same name with the same rows. */
  putDataFile(path: string, bytes: Uint8Array): Promise<void>;
  /** `If-None-Match: *`: a committed version is never overwritten, and a replay never commits twice. */
  putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult>;
  getCommit(deltaVersion: number): Promise<string | undefined>;
  /** Delta versions present in `_delta_log/` (for `inlet table`), ascending. */
  listCommits(): Promise<number[]>;
  /** Overwrites `_delta_log/<name>`: checkpoints and `_last_checkpoint`, both safe to write again. */
  putLogFile(name: string, body: Uint8Array | string): Promise<void>;
  /** `_delta_log/<name>`, or undefined when absent. */
  getLogFile(name: string): Promise<Uint8Array | undefined>;
}

/** The sink's own checkpoint in the ledger: the last Delta version it wrote for the table. */
export interface SinkCursor {
  readonly table: string;
  /** -1 before the first commit. */
  readonly deltaVersion: number;
  readonly schema?: TableSchema;
  readonly rows: number;
  readonly rescued: number;
}

export interface SinkCursorStore {
  get(table: string): Promise<SinkCursor>;
  /** Conditional on the cursor still being at `from`: two sinks racing advance it once. */
  advance(from: SinkCursor, to: SinkCursor): Promise<boolean>;
  /** cleanSource's cursor: the last manifest version whose landing files were cleaned (0: none). */
  getCleaned(table: string): Promise<number>;
  advanceCleaned(table: string, from: number, to: number): Promise<boolean>;
}

/** cleanSource's S3 calls on landing files. Both are safe to repeat. */
export interface LandingCleaner {
  /** Deletes the object (its version, when the manifest names one); an absent object is already done. */
  remove(ref: ObjectRef): Promise<void>;
  /**
   * Copies the object to `<to.prefix>/<key>` in `to.bucket` (in parts when it is over 5 GB), then removes
   * it, only once the copy is complete. A source already gone is done (a crash after the delete).
   */
  move(ref: ObjectRef, to: { readonly bucket: string; readonly prefix: string }): Promise<'moved' | 'gone'>;
}

/** How far the table's manifests go: the sink's lag is measured against it. */
export interface ManifestHeads {
  /** The table's last committed manifest version (0 before the first). */
  committedHead(table: string): Promise<number>;
}

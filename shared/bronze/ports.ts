import type { ObjectRef } from '../model.ts';
import type { PutIfAbsentResult } from '../storage/batch-store.ts';

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
  /**
   * A plain put: every attempt names its data files uniquely (PROTOCOL.md "Data Files": uniquely named,
   * never overwritten), so a replay leaves orphans and never rewrites a committed file.
   */
  putDataFile(path: string, bytes: Uint8Array): Promise<void>;
  /**
   * `If-None-Match: *` on `_delta_log/<version>.json`: a log entry is created once and never overwritten.
   * `conflict` is S3's 409 (another conditional write to the key in flight): try again shortly.
   */
  putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult>;
  getCommit(deltaVersion: number): Promise<string | undefined>;
  /**
   * Delta versions present in `_delta_log/`, ascending; with `after`, only those after it, listed from
   * there (`StartAfter`): PROTOCOL.md "Last Checkpoint File", a log is never listed whole on the write path.
   */
  listCommits(after?: number): Promise<number[]>;
  /** Overwrites `_delta_log/<name>`: `_last_checkpoint`, safe to write again. */
  putLogFile(name: string, body: Uint8Array | string): Promise<void>;
  /** `_delta_log/<name>`, or undefined when absent. */
  getLogFile(name: string): Promise<Uint8Array | undefined>;
  /** Ranged reads of `_delta_log/<name>` (a checkpoint, read a row group at a time), or undefined. */
  openLogFile(name: string): Promise<RandomAccessObject | undefined>;
  /**
   * Writes `_delta_log/<name>` from chunks (a checkpoint built a row group at a time), visible whole or not
   * at all once `close` resolves; `abort` drops what was sent. An overwrite, like `putLogFile`.
   */
  streamLogFile(name: string): LogFileStream;
}

export interface LogFileStream {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Where the sink stands in the manifests: every file of `manifestVersion` and of the versions before it is in
 * the Delta table, and the first `filesDone` files of the next one (a version written in parts).
 */
export interface SinkPosition {
  /** 0 before the first. */
  readonly manifestVersion: number;
  readonly filesDone: number;
}

/**
 * The sink's own record in the ledger: where it stands, and the totals of what it wrote. The Delta log is
 * the truth of what is written (its `txn`s); the cursor counts it once and says how far the table is.
 */
export interface SinkCursor extends SinkPosition {
  readonly table: string;
  /** The Delta version of the last commit of ours the totals count; -1 before the first. */
  readonly deltaVersion: number;
  /** `s3://bucket/prefix` of the table it counts (absent on a cursor written before it was kept). */
  readonly location?: string;
  readonly rows: number;
  readonly rescued: number;
  /**
   * Files per part after a part ran out of an invocation's time: halved on each such run, doubled back on
   * each commit, absent when parts are only as small as the limits make them. Lets a run always finish the
   * part it starts, whatever the landing files' latency.
   */
  readonly partFiles?: number;
}

export interface SinkCursorStore {
  get(table: string): Promise<SinkCursor>;
  /**
   * Conditional on the cursor still being at `from` (its `deltaVersion`, which every advance raises, or
   * keeps when it only records `partFiles`): two sinks racing advance it once per commit.
   */
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

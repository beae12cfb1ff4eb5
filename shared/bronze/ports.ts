import type { ObjectRef } from '../ingestion/model.ts';
import type { PutIfAbsentResult } from '../kernel/put-if-absent.ts';

/**
 * Which write of a landing key a table reads (docs/bronze.md, "Which write the sink reads"):
 * - `write` (allowOverwrites): exactly the write the manifest names, by its version id, else by its ETag
 *   (`If-Match`). Another write at the key is another file (its own identity, its own version), so finding
 *   one means the named write is gone: `missing`, never someone else's bytes.
 * - `path` (the default): the file at that path, as Auto Loader reads it. The manifest's version when it
 *   names one and it still exists, else what the key holds now; a rewrite since the event is the same file.
 */
export type ReadIdentity = 'write' | 'path';

/**
 * Why a landing file the manifest names was not read. The sink records the file in the version's commit,
 * logs and counts it; cleanSource never removes it.
 * - `deleted`: no object at the key (404 NoSuchKey): deleted after its event.
 * - `version-gone`: the manifest's object version no longer exists (404 NoSuchVersion): deleted, or
 *   expired by a lifecycle rule (`write` only; a `path` read falls back to the key's current object).
 * - `overwritten`: the key holds another write than the manifest's (`If-Match` answered 412; `write` only).
 */
export type MissingReason = 'deleted' | 'version-gone' | 'overwritten';

export type SourceRead<T> =
  | {
      readonly kind: 'found';
      readonly body: T;
      /**
       * Exactly the write that was read, to read it again (`open(pinned, 'write')`): its version id when S3
       * gave one, else its ETag. A second read of a rewritten key then misses instead of mixing writes.
       */
      readonly pinned: ObjectRef;
      /**
       * Whether this is the write the manifest names. False only for `path` reads of a key rewritten since
       * its event (its ETag differs, or its version is gone): the commit must record the file so cleanSource,
       * which removes only the write the manifest names, leaves it in place.
       */
      readonly asNamed: boolean;
    }
  | { readonly kind: 'missing'; readonly reason: MissingReason; readonly detail: string };

/**
 * Landing files, streamed. A missing bucket (or any other error) is thrown, classified: only the reasons
 * above are "missing".
 */
export interface SourceObjects {
  open(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<AsyncIterable<Uint8Array>>>;
  /** Ranged reads of the object (Parquet keeps its schema in a footer), shaped as hyparquet's `AsyncBuffer`. */
  openRandom(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<RandomAccessObject>>;
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
  /**
   * The `deltaVersion` at which the table's Glue entry was last known to be in step with the log (absent:
   * never, or the table has no catalog). Behind `deltaVersion` after a failed catalog write: the next run
   * repairs the entry (docs/protocol.md, "Catalog projection").
   */
  readonly catalogued?: number;
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

/**
 * What cleanSource did with one landing file:
 * - `removed`: deleted, or moved (copied, then deleted).
 * - `gone`: nothing to do, the write is not there (an earlier attempt removed it, or someone else did).
 * - `left`: the key holds another write than the one named (412 on the conditional delete or copy): left in
 *   place, never deleted; the caller counts it.
 */
export type CleanOutcome =
  | { readonly kind: 'removed' }
  | { readonly kind: 'gone' }
  | { readonly kind: 'left'; readonly reason: string };

/**
 * cleanSource's S3 calls on landing files, each conditional on the write the manifest names: its version
 * id when it has one, else `If-Match` on its ETag (S3 conditional deletes,
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html). Both are safe to repeat.
 * A missing bucket (the landing one, or `moveTo`'s) is an error, never "gone".
 */
export interface LandingCleaner {
  remove(ref: ObjectRef): Promise<CleanOutcome>;
  /**
   * Copies the write to `archiveKey(...)` under `to` (in parts when it is over 5 GB), then removes it, only
   * once the copy is complete.
   */
  move(ref: ObjectRef, to: ArchiveTarget): Promise<CleanOutcome>;
}

/** Where `move` archives a write: the destination bucket and prefix, and whether writes need their own names. */
export interface ArchiveTarget {
  readonly bucket: string;
  readonly prefix: string;
  /**
   * The table's files are writes (allowOverwrites): two writes of one key get two archive keys, so one
   * never overwrites the other in an unversioned archive.
   */
  readonly perWrite: boolean;
}

/**
 * Where another table stands on a landing file (cleanSource's check that every table routing a file has
 * it, docs/bronze.md "cleanSource with several tables").
 */
export interface FileClaims {
  /**
   * The manifest version of `table` that holds the file with this identity, or undefined while no
   * committed batch of the table holds it (not claimed yet, or its batch not committed).
   */
  committedVersion(table: string, identity: string): Promise<number | undefined>;
}

/** How far the table's manifests go: the sink's lag is measured against it. */
export interface ManifestHeads {
  /** The table's last committed manifest version (0 before the first). */
  committedHead(table: string): Promise<number>;
}

/** Asks the sink to run again for a table: after a time budget ran out, so the rest is not left waiting. */
export interface SinkNudger {
  /**
   * `cause`: the message whose run sends the nudge, with its receive count (`<id>.<count>`): one nudge per
   * run, see the dedup id.
   */
  nudge(table: string, afterDeltaVersion: number, cause: string): Promise<void>;
}

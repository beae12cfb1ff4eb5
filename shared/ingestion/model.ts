/** An object as an event describes it: the metadata the claim and the manifest record. */
export interface ObjectRef {
  readonly bucket: string;
  /** The decoded key, exactly as S3 stores it. */
  readonly key: string;
  readonly size: number;
  readonly eTag: string | null;
  readonly versionId: string | null;
  readonly sequencer: string | null;
  /** ISO-8601; when S3 created the object (event time). */
  readonly eventTime: string;
  /**
   * Set on records a backfill enqueued: the one table they are for. Live events route to every matching
   * live table; a backfill for table T must not feed the others (nor a reprocess target feed its source).
   */
  readonly target?: string;
}

/** An object routed to one table: the unit the ledger claims. */
export interface FileRef extends ObjectRef {
  readonly table: string;
  /** Identity within the table (`fileIdentity` in routing.ts); the ledger key is derived from it. */
  readonly identity: string;
}

/**
 * A batch's states, as the ledger stores them (docs/protocol.md): SEALED by its batcher, then COMMITTED into a
 * version by a committer, or ABORTED by a batcher that took its claims over before it sealed.
 */
export const BATCH_STATE = { sealed: 'SEALED', committed: 'COMMITTED', aborted: 'ABORTED' } as const;

export type BatchState = (typeof BATCH_STATE)[keyof typeof BATCH_STATE];

export interface BatchRecord {
  readonly table: string;
  readonly batchId: string;
  readonly state: BatchState;
  readonly fileCount?: number;
  readonly bytes?: number;
  readonly stagedKey?: string;
  /** epoch ms */
  readonly sealedAt?: number;
  readonly version?: number;
  readonly committedAt?: string;
  readonly publishedAt?: string;
  /** Earliest event time in the batch, for the ingestion-lag metric. */
  readonly minEventTime?: string;
}

export interface PendingVersion {
  readonly version: number;
  readonly batchId: string;
  /** ISO-8601; becomes the manifest's committedAt so a rewritten manifest is byte-identical. */
  readonly reservedAt: string;
  /**
   * Group commit: every batch this version covers, `batchId` first. Absent means `[batchId]` (reservations
   * written before group commit, and versions of one batch).
   */
  readonly batchIds?: readonly string[];
  /**
   * The staged list key of each batch, in `batchIds` order (`[batchId]`'s when `batchIds` is absent): a
   * committer finishing a reservation it did not make reads the lists straight away, without one GetItem per
   * batch first. Absent in reservations written before it; those batches' items are read.
   */
  readonly stagedKeys?: readonly string[];
}

export interface TableRecord {
  readonly table: string;
  readonly head: number;
  readonly pending?: PendingVersion;
  readonly files: number;
  readonly bytes: number;
  readonly lastCommitAt?: string;
  readonly lastBatchId?: string;
}

/** Who holds a file claim. */
export interface FileOwner {
  readonly batchId: string;
  /** epoch ms */
  readonly leaseUntil: number;
}

export interface QuarantineEntry {
  /** SQS message id, with `#<record index>` when one record of a message was bad. */
  readonly id: string;
  readonly reason: string;
  /** ISO-8601 when the message was first sent; groups entries by day. */
  readonly sentAt: string;
  readonly source: string;
  /** At most MAX_BODY_BYTES (shared/ingestion/quarantine.ts) of the body, cut at a character boundary. */
  readonly body: string;
  /** Set when the body was cut to fit a DynamoDB item. */
  readonly bodyTruncated?: boolean;
  /** The whole body's length in UTF-8 bytes, when it was cut. */
  readonly bodyBytes?: number;
}

import type { Backoff } from '../kernel/backoff.ts';
import type {
  BatchRecord,
  FileOwner,
  FileRef,
  PendingVersion,
  QuarantineEntry,
  TableRecord,
} from './model.ts';

export type ClaimResult =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'owned'; readonly owner: FileOwner };

export type FenceResult =
  | { readonly kind: 'fenced' }
  /** The old batch is SEALED or COMMITTED after all: its files are in it. */
  | { readonly kind: 'batch-live'; readonly batch: BatchRecord };

export type MoveResult =
  | { readonly kind: 'moved' }
  /** The file no longer names the fenced batch: this is its owner now (ALL_OLD, never a read). */
  | { readonly kind: 'owned'; readonly owner: FileOwner };

export type SealResult = { readonly kind: 'sealed' } | { readonly kind: 'fenced'; readonly state: string };

export type FinalizeResult = 'committed' | 'already-committed';

export interface SealRequest {
  readonly table: string;
  readonly batchId: string;
  readonly fileCount: number;
  readonly bytes: number;
  readonly stagedKey: string;
  readonly sealedAt: number;
  readonly minEventTime: string;
}

/** A ledger entry as the CLI shows it. */
export interface FileEntry extends FileOwner {
  readonly table: string;
  readonly identity: string;
}

/**
 * The claim ledger: the checkpoint. All protocol state lives here (docs/protocol.md, "Items").
 * Adapters map SDK errors with `classifyAwsError`: UnknownOutcomeError whenever any attempt may have been
 * applied, ThrottledError / DefiniteFailureError only when none can have been.
 */
export interface Ledger {
  /** Step B2: one conditional put per file; `owned` carries the current owner (ALL_OLD), never a read. */
  claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult>;
  /** Strongly consistent. */
  getBatch(table: string, batchId: string): Promise<BatchRecord | undefined>;
  /**
   * Strongly consistent, at most 100 ids, one request: the batches found. A batch that is absent, or that
   * the service left unread (a throttle's `UnprocessedKeys`), is simply not in the answer.
   */
  getBatches(table: string, batchIds: readonly string[]): Promise<BatchRecord[]>;
  /**
   * Takeover, step 1: mark BATCH#B ABORTED unless it is SEALED or COMMITTED. ABORTED is final (the seal
   * requires the item to be absent), so once fenced, B can never publish a list: idempotent, once per dead
   * owner and invocation.
   */
  fenceBatch(table: string, batchId: string, byBatchId: string): Promise<FenceResult>;
  /** Takeover, step 2 (only after `fenceBatch` said fenced): move a file from the fenced batch to ours. */
  moveFile(file: FileRef, fromBatchId: string, toBatchId: string, leaseUntil: number): Promise<MoveResult>;
  /** Step B4: create BATCH#B as SEALED unless a takeover already marked it ABORTED. */
  sealBatch(request: SealRequest): Promise<SealResult>;
  /** Strongly consistent; head 0 for a table never committed. */
  getTable(table: string): Promise<TableRecord>;
  /**
   * Step C2: `pending = {head+1, B, batchIds}` if head is still `expectedHead`, nothing is pending and every
   * batch the reservation names is SEALED.
   */
  reserveVersion(table: string, expectedHead: number, pending: PendingVersion): Promise<boolean>;
  /** Step C4: one transaction, TABLE head = v + every batch of the reservation COMMITTED at v. */
  finalizeCommit(
    table: string,
    pending: PendingVersion,
    counters: { files: number; bytes: number },
  ): Promise<FinalizeResult>;
  /** Step C5, the last: `publishedAt`, and the batch leaves the sealed index. Only a COMMITTED batch. */
  markPublished(table: string, batchId: string, at: string): Promise<void>;
  /**
   * Batches of the sparse `sealed` index sealed before `sealedBefore`, oldest first: SEALED ones, and
   * COMMITTED ones whose staged-list delete or event has not happened yet (no `publishedAt`).
   */
  listSealedBatches(table: string, sealedBefore: number): Promise<BatchRecord[]>;
  quarantine(entry: QuarantineEntry): Promise<void>;
  /**
   * Which of these identities the ledger has a claim for (eventually consistent reads, 100 per request):
   * backfill and reconcile skip them. Not on the ingestion path.
   */
  knownIdentities(table: string, identities: readonly string[]): Promise<Set<string>>;
  /**
   * One page of a Scan of the `sealed` index over every table (what `listSealedBatches` holds, for all
   * tables): the sweeper finds tables the configuration no longer names. Pass `nextKey` back to go on.
   */
  scanSealedIndex(page: { readonly startKey?: SealedIndexKey; readonly limit?: number }): Promise<{
    batches: BatchRecord[];
    nextKey?: SealedIndexKey;
  }>;
  /**
   * Group commit: up to `limit` SEALED batches of the table from the `sealed` index, oldest `sealedAt`
   * first (one Query of a few bounded pages: batches past them are not proposed, and commit on their own
   * requests; the index is eventually consistent, so the reservation re-checks each is SEALED).
   */
  listSealedForCommit(table: string, limit: number): Promise<BatchRecord[]>;
}

/** The batches a reservation covers, its own `batchId` first. */
export function reservedBatchIds(pending: PendingVersion): readonly string[] {
  return pending.batchIds && pending.batchIds.length > 0 ? pending.batchIds : [pending.batchId];
}

/**
 * A DynamoDB transaction takes at most 100 items; the commit transaction writes TABLE and every batch of
 * the version, so one version covers at most 99 batches.
 */
export const MAX_BATCHES_PER_VERSION = 99;

/**
 * How an adapter retries a transaction DynamoDB cancelled for a reason that passes (a concurrent transaction
 * on the same item, a throttle), inside one invocation: failing the FIFO message instead would hold the
 * table for a visibility timeout. Full jitter, so committers that conflicted do not meet again at once.
 */
export const TRANSACTION_RETRY = {
  attempts: 5,
  backoff: { base: 25, cap: 1_000, jitter: 'full' },
} as const satisfies { attempts: number; backoff: Backoff };

/** Where a Scan of the sealed index stopped (DynamoDB's LastEvaluatedKey, opaque to callers). */
export type SealedIndexKey = Record<string, unknown>;

/**
 * What operators ask of the ledger (`inlet files`, `inlet quarantine`, local mode's summary): reads only,
 * none of them on the protocol's path, kept apart so the protocol's port says exactly what ingestion needs.
 */
export interface LedgerQueries {
  listQuarantine(days: readonly string[]): Promise<QuarantineEntry[]>;
  getFile(table: string, identity: string): Promise<FileEntry | undefined>;
  /** Look-up by key prefix: a Scan. */
  scanFiles(filter: { table?: string; keyPrefix?: string; limit?: number }): Promise<FileEntry[]>;
}

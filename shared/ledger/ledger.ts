import type {
  BatchRecord,
  FileOwner,
  FileRef,
  PendingVersion,
  QuarantineEntry,
  TableRecord,
} from '../model.ts';

export type ClaimResult =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'owned'; readonly owner: FileOwner };

export type TakeoverResult =
  | { readonly kind: 'taken' }
  /** The old batch is SEALED or COMMITTED after all: the file is in it. */
  | { readonly kind: 'batch-live'; readonly batch: BatchRecord }
  /** Another batcher took the file first. */
  | { readonly kind: 'owner-changed' };

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
  readonly size?: number;
  readonly eventTime?: string;
}

/**
 * The claim ledger: the checkpoint. All protocol state lives here (docs/protocol.md, "Items").
 * Adapters map SDK errors to DefiniteFailureError / UnknownOutcomeError.
 */
export interface Ledger {
  /** Step B2: one conditional put per file; `owned` carries the current owner (ALL_OLD), never a read. */
  claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult>;
  /** Strongly consistent. */
  getBatch(table: string, batchId: string): Promise<BatchRecord | undefined>;
  /** Fenced takeover of a file whose owner batch is ABORTED or never sealed with an expired lease. */
  takeOver(
    file: FileRef,
    fromBatchId: string,
    toBatchId: string,
    leaseUntil: number,
  ): Promise<TakeoverResult>;
  /** Step B4: create BATCH#B as SEALED unless a takeover already marked it ABORTED. */
  sealBatch(request: SealRequest): Promise<SealResult>;
  /** Strongly consistent; head 0 for a table never committed. */
  getTable(table: string): Promise<TableRecord>;
  /** Step C2: `pending = {head+1, B}` if head is still `expectedHead` and nothing is pending. */
  reserveVersion(table: string, expectedHead: number, pending: PendingVersion): Promise<boolean>;
  /** Step C4: one transaction, TABLE head = v + BATCH COMMITTED. */
  finalizeCommit(
    table: string,
    pending: PendingVersion,
    counters: { files: number; bytes: number },
  ): Promise<FinalizeResult>;
  markPublished(table: string, batchId: string, at: string): Promise<void>;
  /** SEALED batches sealed before `sealedBefore` (sparse index; only sealed, uncommitted batches are in it). */
  listSealedBatches(table: string, sealedBefore: number): Promise<BatchRecord[]>;
  quarantine(entry: QuarantineEntry): Promise<void>;
  listQuarantine(days: readonly string[]): Promise<QuarantineEntry[]>;
  getFile(table: string, identity: string): Promise<FileEntry | undefined>;
  /**
   * Which of these identities the ledger has a claim for (eventually consistent reads, 100 per request):
   * backfill and reconcile skip them. Not on the ingestion path.
   */
  knownIdentities(table: string, identities: readonly string[]): Promise<Set<string>>;
  /** Operator look-up by key prefix: a Scan, never on the ingestion path. */
  scanFiles(filter: { table?: string; keyPrefix?: string; limit?: number }): Promise<FileEntry[]>;
}

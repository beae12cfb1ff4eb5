import type { PutIfAbsentResult } from '../kernel/put-if-absent.ts';
import type { Manifest, StagedList } from './manifest.ts';

/** The stores' create-if-absent outcome (defined in the kernel: the bronze store answers the same). */
export type { PutIfAbsentResult };

/** S3: staged file lists (too big for a DynamoDB item), manifests, quarantined bodies. */
export interface BatchStore {
  putStagedList(list: StagedList): Promise<string>;
  /** Throws StagedListMissingError when the list is not there. */
  getStagedList(key: string): Promise<StagedList>;
  /** Only once its batch is COMMITTED; idempotent (deleting a missing key succeeds). */
  deleteStagedList(key: string): Promise<void>;
  /** `IfNoneMatch: '*'`: never overwrites a published version. */
  putManifestIfAbsent(manifest: Manifest): Promise<PutIfAbsentResult>;
  getManifest(table: string, version: number): Promise<Manifest | undefined>;
  listManifestVersions(table: string): Promise<number[]>;
}

/** The FIFO commit queue: group = table, dedup id = batchId. */
export interface CommitQueue {
  requestCommit(table: string, batchId: string): Promise<void>;
  /**
   * Re-sends (the sweeper), 10 per SendMessageBatch; returns the batch ids SQS did not accept. `resendId`
   * joins the dedup id, so a deliberate re-send is not dropped as a duplicate of the original request.
   */
  requestCommits(table: string, batchIds: readonly string[], resendId: string): Promise<string[]>;
}

export interface BatchCommittedEvent {
  readonly table: string;
  readonly version: number;
  readonly batchId: string;
  /** Group commit: every batch of the version (`batchId` is the first); absent for a one-batch version. */
  readonly batchIds?: readonly string[];
  /** The version's files and bytes (all its batches). */
  readonly files: number;
  readonly bytes: number;
  readonly manifestKey: string;
  readonly committedAt: string;
}

/** EventBridge `BatchCommitted`; at least once, consumers dedupe by (table, version). */
export interface EventPublisher {
  batchCommitted(event: BatchCommittedEvent): Promise<void>;
}

import type { Manifest, StagedList } from '../manifest.ts';

export type PutIfAbsentResult = 'created' | 'exists';

/** S3: staged file lists (too big for a DynamoDB item), manifests, quarantined bodies. */
export interface BatchStore {
  putStagedList(list: StagedList): Promise<string>;
  getStagedList(key: string): Promise<StagedList>;
  /** `IfNoneMatch: '*'`: never overwrites a published version. */
  putManifestIfAbsent(manifest: Manifest): Promise<PutIfAbsentResult>;
  getManifest(table: string, version: number): Promise<Manifest | undefined>;
  listManifestVersions(table: string): Promise<number[]>;
}

/** The FIFO commit queue: group = table, dedup id = batchId. */
export interface CommitQueue {
  requestCommit(table: string, batchId: string): Promise<void>;
}

export interface BatchCommittedEvent {
  readonly table: string;
  readonly version: number;
  readonly batchId: string;
  readonly files: number;
  readonly bytes: number;
  readonly manifestKey: string;
  readonly committedAt: string;
}

/** EventBridge `BatchCommitted`; at least once, consumers dedupe by (table, version). */
export interface EventPublisher {
  batchCommitted(event: BatchCommittedEvent): Promise<void>;
}

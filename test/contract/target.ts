import type { BatchStore, CommitQueue } from '../../shared/ingestion/batch-store.ts';
import type { Ledger, LedgerQueries } from '../../shared/ingestion/ledger.ts';
import type { Manifest, StagedList } from '../../shared/ingestion/manifest.ts';
import type { FileRef } from '../../shared/ingestion/model.ts';

/** A commit request as a consumer of the FIFO queue receives it. */
export interface ReceivedCommit {
  readonly body: string;
  readonly group: string | undefined;
}

/** One implementation of the ports under contract: the in-memory fakes, or the adapters on the emulator. */
export interface ContractTarget {
  readonly ledger: Ledger & LedgerQueries;
  readonly store: BatchStore;
  readonly commitQueue: CommitQueue;
  /** Every commit request visible on the queue now (received and deleted, so the next call sees new ones). */
  receiveCommits(): Promise<ReceivedCommit[]>;
}

export type TargetFactory = () => Promise<ContractTarget>;

let seq = 0;
/** A table name no other test of the run uses: the moto target shares one ledger table and one bucket. */
export const freshTable = (): string => `t${Date.now().toString(36)}${(++seq).toString(36)}`;

export function fileRef(table: string, key: string, size = 10): FileRef {
  return {
    table,
    identity: `${key}#e-${key.length}`,
    bucket: 'landing',
    key,
    size,
    eTag: `e-${key.length}`,
    versionId: null,
    sequencer: '00A1',
    eventTime: '2026-11-30T10:00:00.000Z',
  };
}

export function stagedList(table: string, batchId: string, keys: readonly string[]): StagedList {
  return { table, batchId, files: keys.map((key) => fileRef(table, key)) };
}

export function manifest(table: string, version: number, batchId: string): Manifest {
  return {
    table,
    version,
    committedAt: '2026-11-30T10:00:01.000Z',
    batchIds: [batchId],
    fileCount: 1,
    bytes: 10,
    files: [],
    entries: [],
  };
}

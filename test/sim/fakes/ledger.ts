/**
 * The Ledger port over the in-memory DynamoDB table, written as the DynamoDB adapter is: the same items,
 * the same conditions, the same mapping of SDK errors (through a classifier, the real one by default).
 * Every call goes through the SDK fault model on behalf of one worker.
 */

import type {
  ClaimResult,
  FenceResult,
  FileEntry,
  FinalizeResult,
  Ledger,
  LedgerQueries,
  MoveResult,
  SealedIndexKey,
  SealRequest,
  SealResult,
} from '../../../shared/ingestion/ledger.ts';
import { reservedBatchIds, TRANSACTION_RETRY } from '../../../shared/ingestion/ledger.ts';
import {
  decodeBatch,
  decodeFileEntry,
  decodeOwner,
  decodeQuarantine,
  decodeTable,
} from '../../../shared/ingestion/ledger-items.ts';
import {
  batchKey,
  fileKey,
  quarantineKey,
  quarantinePartitions,
  tableKey,
} from '../../../shared/ingestion/ledger-keys.ts';
import {
  BATCH_STATE,
  type BatchRecord,
  type FileRef,
  type PendingVersion,
  type QuarantineEntry,
  type TableRecord,
} from '../../../shared/ingestion/model.ts';
import { backoffDelay } from '../../../shared/kernel/backoff.ts';
import {
  classifyAwsError,
  type InletError,
  isThrottle,
  mayHaveBeenApplied,
  UnknownOutcomeError,
} from '../../../shared/kernel/errors.ts';
import type { Aws, SdkError } from '../faults.ts';
import type { Worker } from '../scheduler.ts';
import type { DynamoTable, Item, TxOp } from './dynamo.ts';

export type Classify = (operation: string, error: unknown) => InletError;

const named = (error: unknown, name: string) => (error as SdkError | undefined)?.name === name;

export interface LedgerContext {
  readonly db: DynamoTable;
  readonly aws: Aws;
  readonly worker: Worker;
  readonly classify?: Classify;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
}

const TRANSIENT_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);
function cancelledTransiently(error: unknown): boolean {
  const reasons = (error as { CancellationReasons?: Array<{ Code: string }> }).CancellationReasons ?? [];
  const codes = reasons.map((r) => r.Code);
  return codes.some((c) => TRANSIENT_REASONS.has(c)) && !codes.includes('ConditionalCheckFailed');
}

export class SimLedger implements Ledger, LedgerQueries {
  protected readonly classify: Classify;
  constructor(protected readonly ctx: LedgerContext) {
    this.classify = ctx.classify ?? classifyAwsError;
  }

  protected send<T>(op: string, apply: () => T): Promise<T> {
    return this.ctx.aws.send(this.ctx.worker, 'dynamodb', op, apply);
  }

  private async call<T>(op: string, apply: () => T): Promise<T> {
    try {
      return await this.send(op, apply);
    } catch (error) {
      throw this.classify(op, error);
    }
  }

  /**
   * As the adapter's `transact`: a cancellation that is only conflicts or throttles, or a throttle no
   * attempt of which may have applied, is retried as TRANSACTION_RETRY says; the sleep is simulated.
   */
  private async transact(op: string, apply: () => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.send(op, apply);
        return;
      } catch (error) {
        const transient = named(error, 'TransactionCanceledException')
          ? cancelledTransiently(error)
          : isThrottle(error) && !mayHaveBeenApplied(error);
        if (!transient || attempt >= TRANSACTION_RETRY.attempts) throw error;
        await this.ctx.sleep(backoffDelay(TRANSACTION_RETRY.backoff, attempt, this.ctx.random));
      }
    }
  }

  /** The writes of this worker: the table knows whose transaction holds an item (see DynamoTable). */
  private write(op: Parameters<DynamoTable['write']>[0]): void {
    this.ctx.db.write(op, this.ctx.worker.name);
  }

  private transactItems(ops: readonly TxOp[], holdMs: number): void {
    this.ctx.db.transact(ops, holdMs, this.ctx.worker.name);
  }

  /** Transactions take a few ms on the service side; other writes to their items conflict meanwhile. */
  protected holdMs(): number {
    return 15;
  }

  async claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult> {
    try {
      await this.send(`claimFile ${file.table}/${file.key} for ${batchId}`, () =>
        this.write({
          key: fileKey(file.table, file.identity),
          condition: (old) => old === undefined,
          write: () => ({ batchId, leaseUntil }),
          returnOldOnFailure: true,
        }),
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (named(error, 'ConditionalCheckFailedException')) {
        const old = (error as { Item?: Item }).Item;
        if (!old) return { kind: 'owned', owner: { batchId: '', leaseUntil: 0 } };
        return {
          kind: 'owned',
          owner: decodeOwner(old),
        };
      }
      throw this.classify('claim file', error);
    }
  }

  async getBatch(table: string, batchId: string): Promise<BatchRecord | undefined> {
    const item = await this.call(`get batch ${table}/${batchId}`, () =>
      this.ctx.db.get(batchKey(table, batchId)),
    );
    return item ? decodeBatch(item) : undefined;
  }

  async getBatches(table: string, batchIds: readonly string[]): Promise<BatchRecord[]> {
    const items = await this.call(`get batches ${table}/${batchIds.join(',')}`, () =>
      batchIds.map((id) => this.ctx.db.get(batchKey(table, id))),
    );
    return items.filter((item) => item !== undefined).map(decodeBatch);
  }

  async fenceBatch(table: string, batchId: string, byBatchId: string): Promise<FenceResult> {
    try {
      await this.send(`fenceBatch ${table}/${batchId} by ${byBatchId}`, () =>
        this.write({
          key: batchKey(table, batchId),
          condition: (old) => old === undefined || old.state === BATCH_STATE.aborted,
          write: () => ({ table, batchId, state: BATCH_STATE.aborted, abortedBy: byBatchId }),
          returnOldOnFailure: true,
        }),
      );
      return { kind: 'fenced' };
    } catch (error) {
      if (named(error, 'ConditionalCheckFailedException')) {
        const old = (error as { Item?: Item }).Item;
        const batch = old ? decodeBatch(old) : await this.getBatch(table, batchId);
        if (batch && batch.state !== BATCH_STATE.aborted) return { kind: 'batch-live', batch };
      }
      throw this.classify('fence batch', error);
    }
  }

  async moveFile(
    file: FileRef,
    fromBatchId: string,
    decodeBatchId: string,
    leaseUntil: number,
  ): Promise<MoveResult> {
    try {
      await this.send(`moveFile ${file.table}/${file.key} ${fromBatchId}->${decodeBatchId}`, () =>
        this.write({
          key: fileKey(file.table, file.identity),
          condition: (old) => old?.batchId === fromBatchId,
          write: (old) => ({ ...old, batchId: decodeBatchId, leaseUntil, takenFrom: fromBatchId }),
          returnOldOnFailure: true,
        }),
      );
      return { kind: 'moved' };
    } catch (error) {
      const old = (error as { Item?: Item }).Item;
      if (named(error, 'ConditionalCheckFailedException') && old)
        return {
          kind: 'owned',
          owner: decodeOwner(old),
        };
      throw this.classify('move file', error);
    }
  }

  async sealBatch(request: SealRequest): Promise<SealResult> {
    try {
      await this.send(`sealBatch ${request.table}/${request.batchId}`, () =>
        this.write({
          key: batchKey(request.table, request.batchId),
          condition: (old) => old === undefined,
          write: () => ({ ...request, state: BATCH_STATE.sealed, sealedTable: request.table }),
          returnOldOnFailure: true,
        }),
      );
      return { kind: 'sealed' };
    } catch (error) {
      if (named(error, 'ConditionalCheckFailedException')) {
        const old = (error as { Item?: Item }).Item;
        const state = old ? decodeBatch(old).state : 'UNKNOWN';
        if (state === BATCH_STATE.sealed || state === BATCH_STATE.committed) return { kind: 'sealed' };
        return { kind: 'fenced', state };
      }
      throw this.classify('seal batch', error);
    }
  }

  async getTable(table: string): Promise<TableRecord> {
    const item = await this.call('get table', () => this.ctx.db.get(tableKey(table)));
    return decodeTable(table, item);
  }

  /** The reservation's guard on the batch; a broken variant drops it. */
  protected batchMustBeSealed(old: Item | undefined): boolean {
    return old?.state === BATCH_STATE.sealed;
  }

  async reserveVersion(table: string, expectedHead: number, pending: PendingVersion): Promise<boolean> {
    try {
      await this.transact(`reserveVersion ${table} v${pending.version} for ${pending.batchId}`, () =>
        this.transactItems(
          [
            {
              key: tableKey(table),
              condition: (old) =>
                old?.pending === undefined && ((old?.head as number | undefined) ?? 0) === expectedHead,
              write: (old) => ({ ...old, pending, table }),
            },
            // Group commit: every batch the reservation names must be SEALED.
            ...reservedBatchIds(pending).map((batchId) => ({
              key: batchKey(table, batchId),
              condition: (old: Item | undefined) => this.batchMustBeSealed(old),
            })),
          ],
          this.holdMs(),
        ),
      );
      return true;
    } catch (error) {
      if (named(error, 'TransactionCanceledException')) return false;
      const failure = this.classify('reserve version', error);
      if (!(failure instanceof UnknownOutcomeError)) throw failure;
      // Maybe applied: the table says (as the adapter does).
      const now = await this.getTable(table);
      return now.pending?.batchId === pending.batchId && now.pending.version === pending.version;
    }
  }

  async finalizeCommit(
    table: string,
    pending: PendingVersion,
    counters: { files: number; bytes: number },
  ): Promise<FinalizeResult> {
    const now = new Date(this.ctx.worker.now()).toISOString();
    try {
      await this.transact(`finalizeCommit ${table} v${pending.version} ${pending.batchId}`, () =>
        this.transactItems(
          [
            {
              key: tableKey(table),
              condition: (old) => {
                const p = old?.pending as PendingVersion | undefined;
                return p?.batchId === pending.batchId && p.version === pending.version;
              },
              write: (old) => {
                const { pending: _, ...rest } = old ?? {};
                return {
                  ...rest,
                  head: pending.version,
                  lastCommitAt: now,
                  lastBatchId: pending.batchId,
                  files: ((old?.files as number | undefined) ?? 0) + counters.files,
                  bytes: ((old?.bytes as number | undefined) ?? 0) + counters.bytes,
                };
              },
            },
            // Every batch of the group; each stays in the sealed index until markPublished, as in the
            // adapter: the sweeper finds a committed version whose event failed there.
            ...reservedBatchIds(pending).map((batchId) => ({
              key: batchKey(table, batchId),
              condition: (old: Item | undefined) => old?.state === BATCH_STATE.sealed,
              write: (old: Item | undefined) => {
                return {
                  ...old,
                  state: BATCH_STATE.committed,
                  version: pending.version,
                  committedAt: pending.reservedAt,
                };
              },
            })),
          ],
          this.holdMs(),
        ),
      );
      return 'committed';
    } catch (error) {
      const failure = this.classify('finalize commit', error);
      if (named(error, 'TransactionCanceledException') || failure instanceof UnknownOutcomeError) {
        const batch = await this.getBatch(table, pending.batchId);
        if (batch?.state === BATCH_STATE.committed && batch.version === pending.version)
          return 'already-committed';
      }
      throw failure;
    }
  }

  async markPublished(table: string, batchId: string, at: string): Promise<void> {
    await this.call(`markPublished ${table}/${batchId}`, () =>
      this.write({
        key: batchKey(table, batchId),
        condition: (old) => old?.state === BATCH_STATE.committed,
        write: (old) => {
          const { sealedTable: _, ...rest } = old ?? {};
          return { ...rest, publishedAt: at };
        },
      }),
    );
  }

  async scanSealedIndex(page: { readonly startKey?: SealedIndexKey; readonly limit?: number }) {
    // One page holds everything: the simulation's index is small.
    const batches = await this.call('scan sealed index', () =>
      this.ctx.db
        .all()
        .filter((i) => i.sealedTable !== undefined)
        .slice(0, page.limit ?? Number.POSITIVE_INFINITY)
        .map(decodeBatch),
    );
    return { batches };
  }

  async listSealedForCommit(table: string, limit: number): Promise<BatchRecord[]> {
    return this.call('list sealed for commit', () =>
      this.ctx.db
        .all()
        .filter((i) => i.sealedTable === table && i.state === BATCH_STATE.sealed)
        .sort((a, b) => (a.sealedAt as number) - (b.sealedAt as number))
        .slice(0, limit)
        .map(decodeBatch),
    );
  }

  async listSealedBatches(table: string, sealedBefore: number): Promise<BatchRecord[]> {
    // The sparse index is eventually consistent in AWS; the sweeper only looks at old batches anyway.
    return this.call('list sealed batches', () =>
      this.ctx.db
        .all()
        .filter((i) => i.sealedTable === table && (i.sealedAt as number) < sealedBefore)
        .sort((a, b) => (a.sealedAt as number) - (b.sealedAt as number))
        .map(decodeBatch),
    );
  }

  async quarantine(entry: QuarantineEntry): Promise<void> {
    await this.call('quarantine', () =>
      this.write({
        key: quarantineKey(entry.sentAt.slice(0, 10), entry.id),
        condition: () => true,
        write: () => ({ ...entry }),
      }),
    );
  }

  async listQuarantine(days: readonly string[]): Promise<QuarantineEntry[]> {
    const pks = new Set(days.flatMap(quarantinePartitions));
    return this.call('list quarantine', () =>
      this.ctx.db
        .all()
        .filter((i) => pks.has(i.pk as string))
        .map(decodeQuarantine),
    );
  }

  async getFile(table: string, identity: string): Promise<FileEntry | undefined> {
    const item = await this.call('get file', () => this.ctx.db.get(fileKey(table, identity)));
    return item ? decodeFileEntry(item) : undefined;
  }

  async knownIdentities(table: string, identities: readonly string[]): Promise<Set<string>> {
    return this.call('read ledger', () => {
      const known = new Set<string>();
      for (const identity of identities) if (this.ctx.db.get(fileKey(table, identity))) known.add(identity);
      return known;
    });
  }

  async scanFiles(filter: { table?: string; limit?: number }): Promise<FileEntry[]> {
    const prefix = filter.table ? `FILE#${filter.table}#` : 'FILE#';
    return this.call('scan files', () =>
      this.ctx.db
        .all()
        .filter((i) => (i.pk as string).startsWith(prefix))
        .slice(0, filter.limit ?? 1000)
        .flatMap((i) => decodeFileEntry(i) ?? []),
    );
  }
}

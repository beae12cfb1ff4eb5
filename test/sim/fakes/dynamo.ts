/**
 * One DynamoDB table in memory with the semantics the ledger relies on: conditional writes that return
 * the old item (ALL_OLD) on failure, TransactWriteItems with per-item cancellation reasons, and conflicts
 * between a transaction and any other write to one of its items while it is in progress.
 *
 * A transaction applies at one instant here and then holds its items for a few simulated ms, standing in
 * for the time its two-phase commit takes on AWS. Only other writers meet that hold: the writer that got
 * the answer knows the transaction is over (TransactWriteItems is synchronous), so its next request on
 * the same item must not conflict, or the fakes refuse a sequence AWS accepts (test/contract/).
 */
import { sdkError } from '../faults.ts';
import type { Scheduler } from '../scheduler.ts';

export type Item = Record<string, unknown>;
export interface Key {
  readonly pk: string;
  readonly sk: string;
}

export interface TxOp {
  readonly key: Key;
  /** The condition on the current item (undefined when absent); true when there is none. */
  readonly condition: (old: Item | undefined) => boolean;
  /** The new item; undefined for a ConditionCheck. */
  readonly write?: (old: Item | undefined) => Item;
  readonly returnOldOnFailure?: boolean;
}

const id = (key: Key) => `${key.pk}\u0000${key.sk}`;
const copy = (item: Item | undefined) => (item === undefined ? undefined : structuredClone(item));

export class DynamoTable {
  private readonly items = new Map<string, Item>();
  /** Items held by a transaction until this simulated time (its two-phase commit in flight), and by whom. */
  private readonly held = new Map<string, { readonly until: number; readonly by: string | undefined }>();

  constructor(private readonly scheduler: Scheduler) {}

  get(key: Key): Item | undefined {
    return copy(this.items.get(id(key)));
  }

  all(): Item[] {
    return [...this.items.values()].map((item) => copy(item) as Item);
  }

  private heldNow(key: Key, by: string | undefined): boolean {
    const hold = this.held.get(id(key));
    return hold !== undefined && hold.until > this.scheduler.now && (by === undefined || hold.by !== by);
  }

  /** PutItem / UpdateItem with a condition; throws ConditionalCheckFailedException carrying the old item. */
  write(op: TxOp & { readonly write: (old: Item | undefined) => Item }, by?: string): void {
    // "TransactionConflictException: ... an ongoing transaction" (DynamoDB API, PutItem/UpdateItem errors).
    if (this.heldNow(op.key, by)) throw sdkError('TransactionConflictException', 400);
    const old = this.items.get(id(op.key));
    if (!op.condition(copy(old))) {
      throw sdkError('ConditionalCheckFailedException', 400, {
        Item: op.returnOldOnFailure ? copy(old) : undefined,
      });
    }
    this.items.set(id(op.key), { ...op.write(copy(old)), ...op.key });
  }

  /**
   * TransactWriteItems: all or nothing. Cancelled with `TransactionConflict` for an item another
   * transaction holds, else `ConditionalCheckFailed` for each failed condition (other items: `None`).
   */
  transact(ops: readonly TxOp[], holdMs: number, by?: string): void {
    const conflicts = ops.map((op) => this.heldNow(op.key, by));
    const olds = ops.map((op) => copy(this.items.get(id(op.key))));
    const failed = ops.map((op, i) => !op.condition(olds[i]));
    if (conflicts.some(Boolean) || failed.some(Boolean)) {
      const CancellationReasons = ops.map((op, i) => {
        if (conflicts[i]) return { Code: 'TransactionConflict' };
        if (failed[i])
          return { Code: 'ConditionalCheckFailed', ...(op.returnOldOnFailure ? { Item: olds[i] } : {}) };
        return { Code: 'None' };
      });
      throw sdkError('TransactionCanceledException', 400, { CancellationReasons });
    }
    ops.forEach((op, i) => {
      if (op.write) this.items.set(id(op.key), { ...op.write(olds[i]), ...op.key });
      this.held.set(id(op.key), { until: this.scheduler.now + holdMs, by });
    });
  }
}

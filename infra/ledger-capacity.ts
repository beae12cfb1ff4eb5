import { BillingMode, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { DEFAULTS } from '../shared/kernel/defaults.ts';

const PROVISIONED = DEFAULTS.provisionedLedger;

/** A range of capacity units auto scaling keeps a table (or index) within. */
export interface CapacityRange {
  readonly min: number;
  readonly max: number;
}

/**
 * The ledger on provisioned capacity with auto scaling (docs/performance.md, "A provisioned ledger"): at a
 * steady rate a write capacity unit-hour costs less than the write requests it serves on demand, at the
 * price of throttling while auto scaling catches up with a sudden rise (handled as any throttle is: the
 * claim's message comes back with backoff, transactions are retried).
 */
export interface ProvisionedLedgerCapacity {
  readonly mode: 'provisioned';
  /**
   * The table's write capacity units. A file's claim is one write unit; at the target utilization the table
   * then takes `max x target` files a second. @default { min: 5, max: 4000 }
   */
  readonly writeUnits?: CapacityRange;
  /**
   * The table's read capacity units: commits read a few items each, and a backfill looks up every listed key
   * (half a unit each, eventually consistent), so `max` bounds a backfill's rate. @default { min: 5, max: 2000 }
   */
  readonly readUnits?: CapacityRange;
  /**
   * Consumed over provisioned capacity that auto scaling tracks, 20-90 (DynamoDB's range): lower leaves more
   * headroom for a rise before throttling, higher costs less. @default 70
   */
  readonly targetUtilizationPercent?: number;
}

/** @default { mode: 'on-demand' } */
export type LedgerCapacity = { readonly mode: 'on-demand' } | ProvisionedLedgerCapacity;

/** Every problem with the capacity settings (empty when they are fine). */
export function ledgerCapacityProblems(capacity: LedgerCapacity | undefined): string[] {
  if (!capacity || capacity.mode === 'on-demand') return [];
  if (capacity.mode !== 'provisioned')
    return [
      `ledgerCapacity.mode: 'on-demand' or 'provisioned', got '${String((capacity as { mode: unknown }).mode)}'`,
    ];
  const problems: string[] = [];
  const range = (name: string, r: CapacityRange | undefined) => {
    if (!r) return;
    if (!Number.isInteger(r.min) || r.min < 1)
      problems.push(`ledgerCapacity.${name}.min: an integer of at least 1`);
    if (!Number.isInteger(r.max) || r.max > 40_000)
      problems.push(
        `ledgerCapacity.${name}.max: an integer of at most 40,000 (DynamoDB's default table quota)`,
      );
    if (r.max < r.min) problems.push(`ledgerCapacity.${name}: max (${r.max}) below min (${r.min})`);
  };
  range('writeUnits', capacity.writeUnits);
  range('readUnits', capacity.readUnits);
  const target = capacity.targetUtilizationPercent;
  if (target !== undefined && !(target >= 20 && target <= 90))
    problems.push('ledgerCapacity.targetUtilizationPercent: 20-90 (DynamoDB auto scaling)');
  return problems;
}

/** The billing settings of the ledger table: on-demand, or provisioned at the minimum auto scaling starts from. */
export function ledgerBilling(capacity: LedgerCapacity | undefined) {
  if (!capacity || capacity.mode === 'on-demand') return { billingMode: BillingMode.PAY_PER_REQUEST };
  return {
    billingMode: BillingMode.PROVISIONED,
    readCapacity: (capacity.readUnits ?? PROVISIONED.readUnits).min,
    writeCapacity: (capacity.writeUnits ?? PROVISIONED.writeUnits).min,
  };
}

/**
 * The sealed index's starting capacity, when the table is provisioned. The index is sparse (batches with work
 * left: a few writes per batch of up to 1,000 files, one Query per commit) but needs capacity of its own, and a
 * throttled index write throttles the table's write, so it scales too, up to the table's maximum.
 */
export function indexBilling(capacity: LedgerCapacity | undefined) {
  if (!capacity || capacity.mode === 'on-demand') return {};
  return { readCapacity: PROVISIONED.indexMinUnits, writeCapacity: PROVISIONED.indexMinUnits };
}

/** Target tracking auto scaling on the table's and the index's reads and writes (CDK's `autoScale*Capacity`). */
export function autoScaleLedger(table: Table, indexName: string, capacity: LedgerCapacity | undefined): void {
  if (!capacity || capacity.mode === 'on-demand') return;
  const writes = capacity.writeUnits ?? PROVISIONED.writeUnits;
  const reads = capacity.readUnits ?? PROVISIONED.readUnits;
  const utilization = {
    targetUtilizationPercent: capacity.targetUtilizationPercent ?? PROVISIONED.targetUtilizationPercent,
  };
  table
    .autoScaleWriteCapacity({ minCapacity: writes.min, maxCapacity: writes.max })
    .scaleOnUtilization(utilization);
  table
    .autoScaleReadCapacity({ minCapacity: reads.min, maxCapacity: reads.max })
    .scaleOnUtilization(utilization);
  table
    .autoScaleGlobalSecondaryIndexWriteCapacity(indexName, {
      minCapacity: PROVISIONED.indexMinUnits,
      maxCapacity: writes.max,
    })
    .scaleOnUtilization(utilization);
  table
    .autoScaleGlobalSecondaryIndexReadCapacity(indexName, {
      minCapacity: PROVISIONED.indexMinUnits,
      maxCapacity: reads.max,
    })
    .scaleOnUtilization(utilization);
}

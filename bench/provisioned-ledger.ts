// Dollars per million files with the ledger on provisioned capacity (infra/ledger-capacity.ts) instead of
// on demand, at a steady rate, from the units the cost benchmark counted: the same requests, but DynamoDB's
// write and read units paid as capacity-hours that auto scaling keeps at its target utilization.
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { type BilledUnits, PRICES, usdPerMillionFiles } from './prices.ts';

export interface SteadyRate {
  /** Files a second, steadily. */
  readonly filesPerSecond: number;
  /** Consumed over provisioned capacity that auto scaling holds (infra default 70%). */
  readonly targetUtilization: number;
  /**
   * Capacity units provisioned whatever the rate: auto scaling's minimums for what scales with nothing here
   * (the table's reads, the sealed index's reads and writes, infra/ledger-capacity.ts).
   */
  readonly floorWcu: number;
  readonly floorRcu: number;
}

const PROVISIONED = DEFAULTS.provisionedLedger;

/**
 * The construct's defaults at 100 files a second (8.6 million a day): the table's reads at their minimum,
 * the sealed index's reads and writes at theirs.
 */
export const STEADY_RATE: SteadyRate = {
  filesPerSecond: 100,
  targetUtilization: PROVISIONED.targetUtilizationPercent / 100,
  floorWcu: PROVISIONED.indexMinUnits,
  floorRcu: PROVISIONED.readUnits.min + PROVISIONED.indexMinUnits,
};

/**
 * `usdPerMillionFiles` with the on-demand write and read units replaced by capacity-hours:
 * WCU provisioned = filesPerSecond x writeUnitsPerFile / targetUtilization (+ the floor), the same for reads,
 * each at its hourly price, spread over the files of that hour.
 */
export function provisionedUsdPerMillionFiles(units: BilledUnits, files: number, rate = STEADY_RATE) {
  const perFile = (n: number) => n / files;
  const wcu =
    (rate.filesPerSecond * perFile(units.dynamodbWriteUnits)) / rate.targetUtilization + rate.floorWcu;
  const rcu =
    (rate.filesPerSecond * perFile(units.dynamodbReadUnits)) / rate.targetUtilization + rate.floorRcu;
  const capacityPerHour = wcu * PRICES.dynamodbPerWcuHour + rcu * PRICES.dynamodbPerRcuHour;
  const filesPerHour = rate.filesPerSecond * 3600;
  const withoutOnDemand = usdPerMillionFiles(
    { ...units, dynamodbWriteUnits: 0, dynamodbReadUnits: 0 },
    files,
  );
  return {
    usdPerMillionFiles: Math.round((withoutOnDemand + (capacityPerHour / filesPerHour) * 1e6) * 100) / 100,
    ledgerUsdPerMillionFiles: Math.round((capacityPerHour / filesPerHour) * 1e6 * 1000) / 1000,
    provisionedWcu: Math.round(wcu * 10) / 10,
    provisionedRcu: Math.round(rcu * 10) / 10,
    ...rate,
  };
}

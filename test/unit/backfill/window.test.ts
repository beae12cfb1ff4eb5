import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { S3InventoryReader } from '../../../shared/backfill/aws/s3-inventory-reader.ts';
import { parseCsvLine } from '../../../shared/backfill/inventory-report.ts';
import { keyTimeSchema, prefixesInWindow } from '../../../shared/backfill/key-time.ts';
import { planBackfill } from '../../../shared/backfill/request.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../../../shared/kernel/defaults.ts';
import { ConfigError } from '../../../shared/kernel/errors.ts';
import { ALL_VERSIONS_COLUMNS } from '../../support/inventory.ts';
import { inventoryS3 } from './inventory-s3-fake.ts';

const keyTime = (pattern: string, skewSeconds = 3600) => keyTimeSchema.parse({ pattern, skewSeconds });

describe('reconcile window prefixes (keys with a time pattern)', () => {
  it('lists one prefix per day the window, widened by the skew, can touch', () => {
    expect(
      prefixesInWindow(keyTime('orders/dt=YYYY-MM-DD/'), '2026-11-30T09:00:00Z', '2026-11-30T11:45:00Z'),
    ).toEqual(['orders/dt=2026-11-30/']);
    // An hour of skew reaches back over midnight.
    expect(
      prefixesInWindow(keyTime('orders/dt=YYYY-MM-DD/'), '2026-11-30T00:30:00Z', '2026-11-30T02:00:00Z'),
    ).toEqual(['orders/dt=2026-11-29/', 'orders/dt=2026-11-30/']);
    expect(
      prefixesInWindow(keyTime('logs/YYYY/MM/DD/HH/', 0), '2026-11-30T09:10:00Z', '2026-11-30T11:00:00Z'),
    ).toEqual(['logs/2026/11/30/09/', 'logs/2026/11/30/10/']);
    expect(
      prefixesInWindow(keyTime('m/YYYY-MM/', 0), '2026-12-31T23:00:00Z', '2027-01-01T01:00:00Z'),
    ).toEqual(['m/2026-12/', 'm/2027-01/']);
  });

  it('refuses patterns that cannot name one prefix per unit, and one outside the table prefix', () => {
    expect(keyTimeSchema.safeParse({ pattern: 'orders/DD/' }).success).toBe(false);
    expect(keyTimeSchema.safeParse({ pattern: 'orders/YYYY/DD/' }).success).toBe(false);
    expect(keyTimeSchema.safeParse({ pattern: 'orders/MM/YYYY/' }).success).toBe(false);
    expect(() =>
      parsePipelineConfig({ tables: [{ name: 'o', prefix: 'orders/', keyTime: { pattern: 'x/YYYY/' } }] }),
    ).toThrow(ConfigError);
  });

  it('a reconcile of such a table plans the window prefixes; a backfill still lists the whole prefix', () => {
    const config = parsePipelineConfig({
      tables: [{ name: 'orders', prefix: 'orders/', keyTime: { pattern: 'orders/dt=YYYY-MM-DD/' } }],
    });
    const execution = { name: 'r', startTime: '2026-11-30T12:00:00.000Z' };
    const reconcile = planBackfill(
      { table: 'orders', mode: 'reconcile', lookbackSeconds: 7200, settleSeconds: 900 },
      config,
      'landing',
      execution,
    ).plan;
    expect(reconcile.windowPrefixes).toEqual(['orders/dt=2026-11-30/']);
    expect(
      planBackfill({ table: 'orders' }, config, 'landing', execution).plan.windowPrefixes,
    ).toBeUndefined();
  });
});

describe('reconcile settle', () => {
  it("a reconcile request without settleSeconds leaves out the construct's default settle, as its schedule would", () => {
    const config = parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/' }] });
    const execution = { name: 'r', startTime: '2026-11-30T12:00:00.000Z' };
    const plan = (settleSeconds?: number) =>
      planBackfill(
        {
          table: 'orders',
          mode: 'reconcile',
          lookbackSeconds: 7200,
          ...(settleSeconds === undefined ? {} : { settleSeconds }),
        },
        config,
        'landing',
        execution,
      ).plan;
    expect(plan().modifiedBefore).toBeDefined();
    expect(plan().modifiedBefore).toBe(plan(DEFAULTS.reconcileSettleMinutes * 60).modifiedBefore);
  });
});

describe('S3 Inventory CSV', () => {
  it('parses quoted fields with commas and doubled quotes', () => {
    expect(parseCsvLine('"b","a,b ""c""","12",""')).toEqual(['b', 'a,b "c"', '12', '']);
  });

  it('reads the rows of one data file from a row on, current objects of the bucket and prefix only', async () => {
    const rows = [
      ['landing', 'orders/a+b%2B.json', 'v1', 'true', 'false', '5', '2026-11-01T00:00:00.000Z', 'e1'],
      ['landing', 'orders/old.json', 'v0', 'false', 'false', '5', '2026-11-01T00:00:00.000Z', 'e0'],
      ['landing', 'orders/gone.json', 'v2', 'true', 'true', '0', '2026-11-01T00:00:00.000Z', ''],
      ['landing', 'clicks/x.json', 'v3', 'true', 'false', '5', '2026-11-01T00:00:00.000Z', 'e3'],
      ['other', 'orders/y.json', 'v4', 'true', 'false', '5', '2026-11-01T00:00:00.000Z', 'e4'],
      ['landing', 'orders/%C3%BC.json', 'v5', 'true', 'false', '7', '2026-11-02T00:00:00.000Z', 'e5'],
    ];
    const body = gzipSync(`${rows.map((r) => r.map((f) => `"${f}"`).join(',')).join('\n')}\n`);
    const s3 = inventoryS3();
    s3.put('inv', 'data/1.csv.gz', { body });
    const reader = new S3InventoryReader(s3.client);
    const file = {
      bucket: 'inv',
      key: 'data/1.csv.gz',
      columns: ALL_VERSIONS_COLUMNS,
    };
    const first = await reader.page(file, { bucket: 'landing', prefix: 'orders/' }, 0, 4);
    expect(first.objects.map((o) => [o.key, o.versionId])).toEqual([['orders/a b+.json', 'v1']]);
    expect(first).toMatchObject({ rows: 4, more: true });
    const rest = await reader.page(file, { bucket: 'landing', prefix: 'orders/' }, 4, 4);
    expect(rest.objects.map((o) => o.key)).toEqual(['orders/ü.json']);
    expect(rest).toMatchObject({ rows: 2, more: false });
  });
});

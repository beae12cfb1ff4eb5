// The backfill's deploy-time settings (docs/deploy.md): a table's keyTime and the inventory buckets, from the
// construct's props and from cdk.json context, validated with every problem listed, and delivered to the
// functions' configuration (INLET_CONFIG), which is where reconcile reads keyTime.
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { readContext } from '../../infra/context.ts';
import { IngestionPipeline } from '../../infra/ingestion-pipeline.ts';
import { InletStack } from '../../infra/inlet-stack.ts';
import { type InletTableProps, validatePipelineProps } from '../../infra/props.ts';
import { cdkApp } from './cdk-app.ts';

/** The tables the backfill function is configured with, as its INLET_CONFIG says. */
function backfillTables(stack: Stack): Record<string, unknown>[] {
  const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
  const [backfill] = Object.entries(functions).filter(([id]) => id.startsWith('InletFunctionsBackfill'));
  const env = (backfill?.[1].Properties?.Environment?.Variables ?? {}) as Record<string, string>;
  return JSON.parse(env.INLET_CONFIG ?? '{}').tables;
}

const ORDERS: InletTableProps = {
  name: 'orders',
  prefix: 'orders/',
  keyTime: { pattern: 'orders/dt=YYYY-MM-DD/' },
};

describe('keyTime per table', () => {
  it('in the construct props reaches the functions, with its skew defaulted', () => {
    const stack = new Stack(cdkApp(), 'KeyTime');
    new IngestionPipeline(stack, 'Inlet', { tables: [ORDERS, { name: 'clicks', prefix: 'clicks/' }] });
    const [orders, clicks] = backfillTables(stack);
    expect(orders?.keyTime).toEqual({ pattern: 'orders/dt=YYYY-MM-DD/', skewSeconds: 3600 });
    expect(clicks?.keyTime).toBeUndefined();
  });

  it('in cdk.json context (and -c JSON) reaches the functions too', () => {
    const tables = [
      { name: 'logs', prefix: 'logs/', keyTime: { pattern: 'logs/YYYY/MM/DD/HH/', skewSeconds: 0 } },
    ];
    for (const value of [tables, JSON.stringify(tables)]) {
      const { props } = readContext((key) => (key === 'inlet:tables' ? value : undefined));
      const stack = new InletStack(cdkApp(), 'FromContext', props);
      expect(backfillTables(stack)[0]?.keyTime).toEqual(tables[0]?.keyTime);
    }
  });

  it('is validated with the rest of the props, every problem listed', () => {
    const problems = validatePipelineProps({
      tables: [
        { name: 'a', prefix: 'a/', keyTime: { pattern: 'b/YYYY/' } },
        { name: 'b', prefix: 'b/', keyTime: { pattern: 'b/DD/MM/' } },
        { name: 'c', prefix: 'c/', keyTime: { pattern: 'c/YYYY/', skewSeconds: -1 } },
        { name: 'd', prefix: 'd/', keyTime: { pattern: 'd/YYYY/', every: 'day' } as never },
        ORDERS,
      ],
      batchSize: 0,
    });
    expect(problems).toEqual([
      "tables[0].keyTime.pattern: must start with the table's prefix 'a/'",
      'tables[1].keyTime.pattern: needs YYYY, then optionally MM, DD, HH, each coarser one present',
      'tables[1].keyTime.pattern: tokens must appear coarsest first (YYYY before MM before DD before HH)',
      expect.stringMatching(/^tables\[2\]\.keyTime\.skewSeconds: /),
      expect.stringMatching(/^tables\[3\]\.keyTime: Unrecognized key: "every"/),
      'batchSize: must be 1-10,000',
    ]);
  });

  it('from context, a bad pattern fails synth with the table named', () => {
    const { props } = readContext(
      (key) =>
        ({
          'inlet:tables': [{ name: 'o', prefix: 'orders/', keyTime: { pattern: 'orders/MM/' } }],
        })[key],
    );
    expect(() => new InletStack(cdkApp(), 'Bad', props)).toThrow(/tables\[0\]\.keyTime\.pattern: needs YYYY/);
  });
});

describe('inventory buckets', () => {
  it('come from context as a list, JSON text or comma-separated names', () => {
    for (const value of [['inv-a', 'inv-b'], '["inv-a","inv-b"]', 'inv-a, inv-b']) {
      const { props } = readContext(
        (key) => ({ 'inlet:tables': [{ name: 't' }], 'inlet:backfillInventoryBuckets': value })[key],
      );
      expect(props.pipeline?.backfill?.inventoryBuckets).toEqual(['inv-a', 'inv-b']);
    }
  });

  it('must be bucket names, each problem listed', () => {
    expect(
      validatePipelineProps({
        tables: [{ name: 't' }],
        backfill: { inventoryBuckets: ['ok-bucket', 's3://inv/reports/', 'arn:aws:s3:::inv', 'Inv'] },
      }),
    ).toEqual([
      "backfill.inventoryBuckets: 's3://inv/reports/' is not a bucket name (3-63 of a-z, 0-9, . and -; no s3:// or key)",
      "backfill.inventoryBuckets: 'arn:aws:s3:::inv' is not a bucket name (3-63 of a-z, 0-9, . and -; no s3:// or key)",
      "backfill.inventoryBuckets: 'Inv' is not a bucket name (3-63 of a-z, 0-9, . and -; no s3:// or key)",
    ]);
  });
});

// The ledger on provisioned capacity with auto scaling (docs/performance.md, "A provisioned ledger"), and
// on-demand by default.
import { Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { readContext } from '../../infra/context.ts';
import { InletStack } from '../../infra/inlet-stack.ts';
import type { LedgerCapacity } from '../../infra/ledger-capacity.ts';
import { acknowledgeNagFindings } from '../../infra/nag.ts';
import { cdkApp } from './cdk-app.ts';

const TABLES = [{ name: 'orders', prefix: 'orders/' }];

function template(ledgerCapacity?: LedgerCapacity): Template {
  const app = cdkApp();
  const stack = new InletStack(app, 'Capacity', { tables: TABLES, pipeline: { ledgerCapacity } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  return Template.fromStack(stack);
}

/** The ledger's auto scaling targets, by scalable dimension and resource id shape. */
function targets(t: Template) {
  return Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).map((r) => ({
    dimension: r.Properties.ScalableDimension as string,
    index: JSON.stringify(r.Properties.ResourceId).includes('/index/'),
    min: r.Properties.MinCapacity as number,
    max: r.Properties.MaxCapacity as number,
  }));
}

describe('ledger capacity', () => {
  it('is on-demand by default, with no auto scaling', () => {
    const t = template();
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      ProvisionedThroughput: Match.absent(),
    });
    t.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
  });

  it('provisioned: the table and its sealed index start at their minimum and scale on utilization', () => {
    const t = template({
      mode: 'provisioned',
      writeUnits: { min: 10, max: 3000 },
      readUnits: { min: 4, max: 500 },
      targetUtilizationPercent: 60,
    });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: Match.absent(),
      ProvisionedThroughput: { ReadCapacityUnits: 4, WriteCapacityUnits: 10 },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'sealed',
          ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 },
        }),
      ],
    });
    expect(
      targets(t).sort((a, b) => `${a.index}${a.dimension}`.localeCompare(`${b.index}${b.dimension}`)),
    ).toEqual(
      [
        { dimension: 'dynamodb:table:ReadCapacityUnits', index: false, min: 4, max: 500 },
        { dimension: 'dynamodb:table:WriteCapacityUnits', index: false, min: 10, max: 3000 },
        { dimension: 'dynamodb:index:ReadCapacityUnits', index: true, min: 1, max: 500 },
        { dimension: 'dynamodb:index:WriteCapacityUnits', index: true, min: 1, max: 3000 },
      ].sort((a, b) => `${a.index}${a.dimension}`.localeCompare(`${b.index}${b.dimension}`)),
    );
    const policies = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policies).toHaveLength(4);
    for (const policy of policies) {
      expect(policy.Properties.PolicyType).toBe('TargetTrackingScaling');
      expect(policy.Properties.TargetTrackingScalingPolicyConfiguration.TargetValue).toBe(60);
    }
  });

  it('provisioned defaults: 5-4,000 write units, 5-2,000 read units, 70% utilization', () => {
    const t = template({ mode: 'provisioned' });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
    });
    expect(targets(t).filter((x) => !x.index)).toEqual(
      expect.arrayContaining([
        { dimension: 'dynamodb:table:WriteCapacityUnits', index: false, min: 5, max: 4000 },
        { dimension: 'dynamodb:table:ReadCapacityUnits', index: false, min: 5, max: 2000 },
      ]),
    );
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        TargetValue: 70,
        PredefinedMetricSpecification: { PredefinedMetricType: 'DynamoDBWriteCapacityUtilization' },
      }),
    });
  });

  it('refuses capacity settings DynamoDB would not take, every problem at once', () => {
    expect(() =>
      template({
        mode: 'provisioned',
        writeUnits: { min: 0, max: 50_000 },
        readUnits: { min: 10, max: 5 },
        targetUtilizationPercent: 95,
      }),
    ).toThrow(
      /writeUnits\.min[\s\S]*writeUnits\.max[\s\S]*readUnits: max \(5\) below min \(10\)[\s\S]*targetUtilizationPercent: 20-90/,
    );
  });

  it('is read from cdk.json context, as JSON or as a -c string', () => {
    const capacity = { mode: 'provisioned', writeUnits: { min: 5, max: 100 } };
    for (const value of [capacity, JSON.stringify(capacity)]) {
      const { props } = readContext((key) =>
        key === 'inlet:tables' ? TABLES : key === 'inlet:ledgerCapacity' ? value : undefined,
      );
      expect(props.pipeline?.ledgerCapacity).toEqual(capacity);
    }
    expect(() =>
      readContext((key) =>
        key === 'inlet:tables' ? TABLES : key === 'inlet:ledgerCapacity' ? { mode: 'reserved' } : undefined,
      ),
    ).toThrow(/inlet:ledgerCapacity/);
  });
});

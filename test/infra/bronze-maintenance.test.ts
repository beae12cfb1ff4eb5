import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InletStack } from '../../infra/inlet-stack.ts';
import { cdkApp } from './cdk-app.ts';

function template(tables: ConstructorParameters<typeof InletStack>[2]['tables']) {
  return Template.fromStack(new InletStack(cdkApp(), 'Maintenance', { tables }));
}

const maintenanceFunctions = (t: Template) =>
  Object.keys(t.findResources('AWS::Lambda::Function')).filter((id) => /Maintenance/.test(id));

describe('bronze maintenance infra', () => {
  it('deploys nothing when every bronze table turns maintenance off', () => {
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json', maintenance: false } },
    ]);
    expect(maintenanceFunctions(t)).toEqual([]);
    expect(Object.keys(t.findResources('AWS::Events::Rule')).filter((id) => /Maintenance/.test(id))).toEqual(
      [],
    );
  });

  it('maintains a bronze table by default: optimize and vacuum once a day', () => {
    const t = template([{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }]);
    expect(maintenanceFunctions(t)).toHaveLength(1);
    t.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 day)',
      Targets: [Match.objectLike({ Input: JSON.stringify({ table: 'orders' }) })],
    });
  });

  it('schedules each asking table with its name, grants only its root, and alarms on failures and the DLQ', () => {
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json', maintenance: { everyHours: 6 } } },
      { name: 'clicks', prefix: 'clicks/', bronze: { format: 'json', maintenance: false } },
    ]);
    expect(maintenanceFunctions(t)).toHaveLength(1);
    t.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(6 hours)',
      Targets: [
        Match.objectLike({
          Input: JSON.stringify({ table: 'orders' }),
          RetryPolicy: { MaximumRetryAttempts: 2 },
          DeadLetterConfig: Match.anyValue(),
        }),
      ],
    });
    const policies = Object.values(t.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p).includes('MaintenanceServiceRole'),
    );
    const statements = policies.flatMap(
      (p) =>
        (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]) ?? [],
    );
    const text = JSON.stringify(statements);
    expect(text).toContain('orders/_bronze/*');
    expect(text).not.toContain('clicks');
    const actions = statements.map((s) => [s.Action].flat().sort().join(','));
    expect(actions).toEqual(
      expect.arrayContaining(['s3:DeleteObject,s3:GetObject,s3:PutObject', 's3:ListBucket']),
    );
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'MaintenanceErrors',
      Namespace: 'Inlet',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible' });
  });
});

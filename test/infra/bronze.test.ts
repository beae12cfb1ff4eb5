import { Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { InletStack } from '../../infra/inlet-stack.ts';
import { acknowledgeNagFindings } from '../../infra/nag.ts';
import { cdkApp } from './cdk-app.ts';

function template(tables: ConstructorParameters<typeof InletStack>[2]['tables']) {
  return Template.fromStack(new InletStack(cdkApp(), 'Bronze', { tables }));
}

describe('bronze sink infra', () => {
  it('is not deployed when no table asks for it', () => {
    const t = template([{ name: 'orders', prefix: 'orders/' }]);
    expect(JSON.stringify(t.toJSON())).not.toContain('INLET_SINK_QUEUE_URL');
  });

  it('deploys one sink on a FIFO queue, fed per bronze table by a rule with the table as message group', () => {
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json' } },
      { name: 'clicks', prefix: 'clicks/', bronze: { format: 'csv' } },
      { name: 'plain', prefix: 'plain/' },
    ]);
    t.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { Environment: { Variables: Match.objectLike({ INLET_SINK_QUEUE_URL: Match.anyValue() }) } },
      1,
    );
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('BronzeSinkQueue'), 'Arn'] },
    });
    for (const table of ['orders', 'clicks']) {
      t.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: { source: ['inlet'], 'detail-type': ['BatchCommitted'], detail: { table: [table] } },
        Targets: [Match.objectLike({ SqsParameters: { MessageGroupId: table } })],
      });
    }
    t.resourcePropertiesCountIs(
      'AWS::Events::Rule',
      { EventPattern: Match.objectLike({ detail: { table: ['plain'] } }) },
      0,
    );
    t.hasResourceProperties('AWS::SQS::Queue', { FifoQueue: true, ContentBasedDeduplication: true });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('BronzeSinkDlq'), 'QueueName'] },
        },
      ],
      AlarmActions: [Match.anyValue()],
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Inlet',
      MetricName: 'SinkVersionsBehind',
      Dimensions: [{ Name: 'service', Value: 'inlet-sink' }],
      Statistic: 'Maximum',
      Period: 900,
      EvaluationPeriods: 4,
      DatapointsToAlarm: 4,
      Threshold: 1,
      AlarmActions: [Match.anyValue()],
    });
  });

  it('nudges each bronze table on its own schedule into its FIFO group, unless the table turns it off', () => {
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json' } },
      { name: 'clicks', prefix: 'clicks/', bronze: { format: 'csv', nudgeEveryMinutes: 5 } },
      { name: 'quiet', prefix: 'quiet/', bronze: { format: 'csv', nudgeEveryMinutes: 0 } },
      { name: 'plain', prefix: 'plain/' },
    ]);
    const schedules = t.findResources('AWS::Scheduler::Schedule');
    const byGroup = Object.values(schedules).map(
      (r) => (r as { Properties: { Target: { SqsParameters: { MessageGroupId: string } } } }).Properties,
    );
    expect(byGroup.map((p) => p.Target.SqsParameters.MessageGroupId).sort()).toEqual(['clicks', 'orders']);
    for (const [table, minutes] of [
      ['orders', 15],
      ['clicks', 5],
    ] as const) {
      t.hasResourceProperties('AWS::Scheduler::Schedule', {
        ScheduleExpression: `rate(${minutes} minutes)`,
        GroupName: Match.stringLikeRegexp('Bronze-NudgeSchedules'),
        Target: {
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('BronzeSinkQueue'), 'Arn'] },
          SqsParameters: { MessageGroupId: table },
          // The firing's time makes each nudge its own message under content-based deduplication.
          Input: JSON.stringify({ table, scheduledAt: '<aws.scheduler.scheduled-time>' }),
          RetryPolicy: { MaximumEventAgeInSeconds: minutes * 60 },
        },
      });
    }
    t.hasResource('AWS::Scheduler::ScheduleGroup', { DeletionPolicy: 'Delete' });
  });

  it('deploys no schedule when every bronze table turns it off', () => {
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json', nudgeEveryMinutes: 0 } },
    ]);
    t.resourceCountIs('AWS::Scheduler::Schedule', 0);
    t.resourceCountIs('AWS::Scheduler::ScheduleGroup', 0);
  });

  it('rejects an invalid bronze config at synth, listing every problem', () => {
    expect(() =>
      template([{ name: 'orders', bronze: { format: 'xml' as 'json', evolution: 'maybe' as 'none' } }]),
    ).toThrow(/tables\[0\]\.bronze\.format[\s\S]*tables\[0\]\.bronze\.evolution/);
  });
});

describe('bronze sink under cdk-nag AwsSolutions', () => {
  it('has every finding fixed or acknowledged with its reason', () => {
    const app = cdkApp();
    const stack = new InletStack(app, 'NagBronze', {
      tables: [
        {
          name: 'orders',
          prefix: 'orders/',
          bronze: { format: 'json', location: 's3://lake-bucket/bronze' },
        },
      ],
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    acknowledgeNagFindings(stack);
    expect(() => app.synth()).not.toThrow();
  });
});

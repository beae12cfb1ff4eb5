import { Duration, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { InletStack } from '../../infra/inlet-stack.ts';
import { acknowledgeNagFindings } from '../../infra/nag.ts';
import { validatePipelineProps } from '../../infra/props.ts';
import { cdkApp } from './cdk-app.ts';

function template(tables: ConstructorParameters<typeof InletStack>[2]['tables']) {
  return Template.fromStack(new InletStack(cdkApp(), 'Bronze', { tables }));
}

describe('bronze sink infra', () => {
  it("passes the pipeline's sink memory and timeout through, the queue's visibility at 6x the timeout", () => {
    const t = Template.fromStack(
      new InletStack(cdkApp(), 'Bronze', {
        tables: [{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }],
        pipeline: { bronzeSink: { memorySize: 2048, timeout: Duration.minutes(10) } },
      }),
    );
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ INLET_SINK_QUEUE_URL: Match.anyValue() }) },
      MemorySize: 2048,
      Timeout: 600,
    });
    t.hasResourceProperties('AWS::SQS::Queue', { FifoQueue: true, VisibilityTimeout: 3600 });
    expect(
      validatePipelineProps({
        tables: [{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }],
        bronzeSink: { memorySize: 100, timeout: Duration.minutes(20) },
      }),
    ).toEqual(['bronzeSink.timeout: 2 to 15 minutes', 'bronzeSink.memorySize: 128-10,240 MB']);
  });

  it('lets the sink back off its failed messages and abort a failed checkpoint upload', () => {
    const t = template([{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }]);
    const statements = Object.values(t.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p).includes('BronzeSink'))
      .flatMap(
        (p) =>
          (p as { Properties: { PolicyDocument: { Statement: { Action: unknown }[] } } }).Properties
            .PolicyDocument.Statement,
      );
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    // ChangeMessageVisibilityBatch is authorized by sqs:ChangeMessageVisibility (the event source's grant).
    expect(actions).toContain('sqs:ChangeMessageVisibility');
    expect(actions).toContain('s3:AbortMultipartUpload');
  });

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

  it('expires noncurrent versions of the Delta tables kept in the versioned manifest bucket after 7 days', () => {
    // Databricks: no bucket versioning for Delta data, or a lifecycle rule keeping versions 7 days or less
    // (https://docs.databricks.com/aws/delta/s3-limitations). A rewritten _last_checkpoint, a replayed data
    // file or a VACUUMed one would otherwise stay billed forever.
    const t = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json' } },
      { name: 'clicks', prefix: 'clicks/', bronze: { format: 'csv', location: 's3://lake/clicks' } },
      { name: 'plain', prefix: 'plain/' },
    ]);
    const rules = Object.values(t.findResources('AWS::S3::Bucket')).flatMap(
      (b) => (b.Properties.LifecycleConfiguration?.Rules ?? []) as Record<string, unknown>[],
    );
    const bronze = rules.filter((r) => String(r.Prefix).includes('_bronze'));
    expect(bronze).toEqual([
      {
        Id: 'bronze-orders-noncurrent',
        Prefix: 'orders/_bronze/',
        NoncurrentVersionExpiration: { NoncurrentDays: 7 },
        ExpiredObjectDeleteMarker: true,
        Status: 'Enabled',
      },
    ]);
  });

  it('rejects an invalid bronze config at synth, listing every problem', () => {
    expect(() =>
      template([{ name: 'orders', bronze: { format: 'xml' as 'json', evolution: 'maybe' as 'none' } }]),
    ).toThrow(/tables\[0\]\.bronze\.format[\s\S]*tables\[0\]\.bronze\.evolution/);
  });
});

/** The dashboard body with each CloudFormation token as `<LogicalId>`, parsed: its widgets' metric arrays. */
function dashboardMetrics(t: Template): { title: string; metrics: unknown[][] }[] {
  const [dashboard] = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1]
          .map((part) => {
            if (typeof part === 'string') return part;
            const token = part as { Ref?: string; 'Fn::GetAtt'?: string[] };
            return `<${token.Ref ?? token['Fn::GetAtt']?.[0] ?? '?'}>`;
          })
          .join('');
  const { widgets } = JSON.parse(text) as {
    widgets: { properties: { title: string; metrics?: unknown[][] } }[];
  };
  return widgets.map((w) => ({ title: w.properties.title, metrics: w.properties.metrics ?? [] }));
}

/** `Namespace/MetricName dimension=value`, as an operator reads a graph's legend. */
function metricNames(metrics: unknown[][]): string[] {
  return metrics.map((m) => {
    const [namespace, name, ...rest] = m.filter((x) => typeof x === 'string') as string[];
    return `${namespace}/${name} ${rest.join('=')}`;
  });
}

describe('the sink beside the other functions in monitoring', () => {
  const bronze = template([{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }]);
  const alarms = Object.values(bronze.findResources('AWS::CloudWatch::Alarm')).map(
    (a) => a.Properties as Record<string, unknown>,
  );
  const onSink = (a: Record<string, unknown>, id: RegExp) => id.test(JSON.stringify(a.Dimensions));

  it("alarms on the sink function's errors and throttles, like the batcher's and committer's", () => {
    for (const metric of ['Errors', 'Throttles']) {
      const sink = alarms.filter(
        (a) =>
          a.Namespace === 'AWS/Lambda' && a.MetricName === metric && onSink(a, /InletBronzeSink[0-9A-F]{8}"/),
      );
      expect(sink).toHaveLength(1);
      expect(sink[0]).toMatchObject({ Statistic: 'Sum', Period: 300, Threshold: 1 });
    }
    // Five functions now: batcher, committer, sweeper, backfill and the sink.
    expect(alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Errors')).toHaveLength(5);
  });

  it("alarms once on the sink DLQ, and on the sink queue's oldest message only past a failed run's retry", () => {
    const dlq = alarms.filter(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && onSink(a, /InletBronzeSinkDlq/),
    );
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ Statistic: 'Maximum', Threshold: 1 });
    // The rules' own DLQ (standard: EventBridge takes no FIFO DLQ), alarmed the same way.
    const eventsDlq = alarms.filter(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && onSink(a, /InletBronzeSinkEventsDlq/),
    );
    expect(eventsDlq).toHaveLength(1);
    expect(eventsDlq[0]).toMatchObject({ Statistic: 'Maximum', Threshold: 1 });
    const age = alarms.filter(
      (a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && onSink(a, /InletBronzeSinkQueue/),
    );
    expect(age).toHaveLength(1);
    // A failed message is retried after the visibility timeout (6 x 15 min) and its retry runs up to 15 min:
    // 105 minutes, held 5 minutes, so one failure never alarms and a group failing again and again does.
    expect(age[0]).toMatchObject({
      Statistic: 'Maximum',
      Threshold: 105 * 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
    });
  });

  /** A sink error metric that fires once it counted in each of 4 quarter hours: one failure never alarms. */
  const EVERY_QUARTER_HOUR_FOR_AN_HOUR = {
    Namespace: 'Inlet',
    Dimensions: [{ Name: 'service', Value: 'inlet-sink' }],
    Statistic: 'Sum',
    Period: 900,
    EvaluationPeriods: 4,
    DatapointsToAlarm: 4,
    Threshold: 1,
  };

  it('alarms when cleanSource fails in every quarter hour for an hour', () => {
    const clean = alarms.filter((a) => a.MetricName === 'SinkCleanErrors');
    expect(clean).toHaveLength(1);
    expect(clean[0]).toMatchObject({
      Namespace: 'Inlet',
      Statistic: 'Sum',
      Period: 900,
      EvaluationPeriods: 4,
      DatapointsToAlarm: 4,
      Threshold: 1,
    });
  });

  it('alarms when the Glue catalog entry of a table cannot be brought in step for an hour', () => {
    const catalog = alarms.filter((a) => a.MetricName === 'SinkCatalogErrors');
    expect(catalog).toHaveLength(1);
    expect(catalog[0]).toMatchObject(EVERY_QUARTER_HOUR_FOR_AN_HOUR);
  });

  it('alarms on symlink manifests that cannot be written for an hour, only where a table keeps them', () => {
    expect(alarms.filter((a) => a.MetricName === 'SinkManifestErrors')).toEqual([]);
    const spectrum = template([
      { name: 'orders', prefix: 'orders/', bronze: { format: 'json', symlinkManifest: true } },
    ]);
    const manifests = Object.values(spectrum.findResources('AWS::CloudWatch::Alarm'))
      .map((a) => a.Properties as Record<string, unknown>)
      .filter((a) => a.MetricName === 'SinkManifestErrors');
    expect(manifests).toHaveLength(1);
    expect(manifests[0]).toMatchObject(EVERY_QUARTER_HOUR_FOR_AN_HOUR);
  });

  it("sends every alarm, the sink's too, to the alarm topic", () => {
    expect(alarms.length).toBeGreaterThan(16);
    for (const alarm of alarms)
      expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^InletAlarms/) }]);
  });

  it("charts the sink's metrics, queue and DLQ on the dashboard beside the other functions'", () => {
    const widgets = dashboardMetrics(bronze);
    const all = widgets.flatMap((w) => metricNames(w.metrics));
    for (const name of [
      'SinkVersionsWritten',
      'SinkRowsWritten',
      'SinkRowsRescued',
      'SinkDataFilesWritten',
      'SinkDataBytesWritten',
      'SinkSourceFilesCleaned',
      'SinkSourceFilesLeft',
      'SinkCleanErrors',
      'SinkCatalogErrors',
      'SinkManifestErrors',
      'SinkSourcesMissing',
      'SinkVersionsBehind',
      'SinkErrors',
    ])
      expect(all).toContain(`Inlet/${name} service=inlet-sink`);
    // In the shared widgets: the sink's errors under Trouble, its DLQ under DLQ depth.
    const trouble = widgets.find((w) => w.title === 'Trouble');
    expect(metricNames(trouble?.metrics ?? [])).toContain('Inlet/SinkErrors service=inlet-sink');
    expect(metricNames(trouble?.metrics ?? [])).toContain('Inlet/SinkCatalogErrors service=inlet-sink');
    expect(metricNames(trouble?.metrics ?? [])).toContain('Inlet/SinkManifestErrors service=inlet-sink');
    const dlq = widgets.find((w) => w.title === 'DLQ depth');
    expect(metricNames(dlq?.metrics ?? []).some((m) => /InletBronzeSinkDlq/.test(m))).toBe(true);
    expect(metricNames(dlq?.metrics ?? []).some((m) => /InletBronzeSinkEventsDlq/.test(m))).toBe(true);
    expect(
      all.some((m) => m.startsWith('AWS/SQS/ApproximateAgeOfOldestMessage') && /SinkQueue/.test(m)),
    ).toBe(true);
  });

  it('charts no sink on a stack without bronze tables', () => {
    const plain = dashboardMetrics(template([{ name: 'orders', prefix: 'orders/' }]));
    expect(plain.flatMap((w) => metricNames(w.metrics)).filter((m) => /Sink/.test(m))).toEqual([]);
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

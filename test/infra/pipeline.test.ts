import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { readContext } from '../../infra/context.ts';
import { IngestionPipeline } from '../../infra/ingestion-pipeline.ts';
import { InletStack, OUTPUTS } from '../../infra/inlet-stack.ts';
import { notificationPrefixes } from '../../infra/props.ts';
import { cdkApp } from './cdk-app.ts';

const app = cdkApp;

const TABLES = [
  { name: 'orders', prefix: 'orders/' },
  { name: 'clicks', prefix: 'clicks/', suffix: '.json' },
];

function template(props: Partial<ConstructorParameters<typeof InletStack>[2]> = {}): Template {
  const stack = new InletStack(app(), 'Test', { tables: TABLES, ...props });
  return Template.fromStack(stack);
}

function policyActions(t: Template, functionPrefix: string): string[] {
  const policies = t.findResources('AWS::IAM::Policy');
  const actions: string[] = [];
  for (const [id, policy] of Object.entries(policies)) {
    if (!id.startsWith(`InletFunctions${functionPrefix}ServiceRoleDefaultPolicy`)) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      actions.push(...[statement.Action].flat());
    }
  }
  return actions.sort();
}

describe('IngestionPipeline', () => {
  const t = template();

  it('maps the ingest queue to the batcher with partial batch responses and MaximumConcurrency', () => {
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 20,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 20 },
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateIngestQueue'), 'Arn'] },
    });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateCommitQueue'), 'Arn'] },
    });
    // Reserved concurrency with an SQS source throttles messages into the DLQ.
    for (const fn of Object.values(t.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('gives both queues encrypted DLQs with redrive, the commit queue FIFO with explicit dedup', () => {
    t.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 1800,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateIngestDlq'), 'Arn'] },
        maxReceiveCount: 10,
      },
    });
    t.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      ContentBasedDeduplication: false,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateCommitDlq'), 'Arn'] },
        maxReceiveCount: 10,
      },
    });
    t.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('keeps the ledger on demand, encrypted, recoverable, protected, with only the sparse batch index', () => {
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'sealed',
          KeySchema: [
            { AttributeName: 'sealedTable', KeyType: 'HASH' },
            { AttributeName: 'sealedAt', KeyType: 'RANGE' },
          ],
        }),
      ],
    });
    t.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('versions the manifest bucket, blocks public access, cleans up deleted staged lists', () => {
    t.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: '_staging/', ExpiredObjectDeleteMarker: true })]),
      },
    });
  });

  it('runs nodejs22.x on arm64 with Powertools settings and log retention', () => {
    t.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { Runtime: 'nodejs22.x', Architectures: ['arm64'] },
      4,
    );
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'inlet-batcher',
          POWERTOOLS_METRICS_NAMESPACE: 'Inlet',
        }),
      },
    });
    // Four functions and the backfill state machine.
    t.resourcePropertiesCountIs('AWS::Logs::LogGroup', { RetentionInDays: 30 }, 5);
  });

  it('grants each function only the actions its protocol steps use', () => {
    expect(policyActions(t, 'Batcher')).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        's3:PutObject',
        'sqs:SendMessage',
      ]),
    );
    expect(policyActions(t, 'Batcher')).not.toEqual(expect.arrayContaining(['dynamodb:DeleteItem']));
    expect(policyActions(t, 'Batcher').filter((a) => a.startsWith('s3:'))).toEqual(['s3:PutObject']);
    expect(policyActions(t, 'Committer')).toEqual(
      expect.arrayContaining([
        'dynamodb:ConditionCheckItem',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        's3:GetObject',
        's3:PutObject',
      ]),
    );
    expect(policyActions(t, 'Committer')).not.toContain('dynamodb:PutItem');
    // The sweeper reads the sealed index by Scan only: no Query (the IAM check found no sweep using one).
    expect(policyActions(t, 'Sweeper').filter((a) => a.startsWith('dynamodb:'))).toEqual([
      'dynamodb:GetItem',
      'dynamodb:Scan',
    ]);
    // Backfill: list and look up, never write the ledger.
    expect(policyActions(t, 'Backfill').filter((a) => a.startsWith('dynamodb:'))).toEqual([
      'dynamodb:BatchGetItem',
    ]);
    expect(policyActions(t, 'Backfill')).toEqual(
      expect.arrayContaining(['s3:ListBucket', 's3:ListBucketVersions', 'sqs:SendMessage']),
    );
    for (const name of ['Batcher', 'Committer', 'Sweeper', 'Backfill']) {
      expect(policyActions(t, name).some((a) => a.endsWith(':*'))).toBe(false);
    }
  });

  it('has a backfill state machine: plan, a Map of partitions whose step retries throttling, merge, continue-as-new, failure report', () => {
    const machines = t.findResources('AWS::StepFunctions::StateMachine');
    expect(Object.keys(machines)).toHaveLength(1);
    const machine = Object.values(machines)[0] as { Properties: Record<string, unknown> };
    const parts = (machine.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const text = parts.map((p) => (typeof p === 'string' ? p : 'X')).join('');
    const definition = JSON.parse(text.replace(/arn:X:/g, 'arn:aws:').replace(/"X"/g, '"x"'));
    expect(definition.StartAt).toBe('Plan');
    expect(Object.keys(definition.States).sort()).toEqual(
      [
        'Continued',
        'ContinueAsNew',
        'DescribeFailure',
        'Done',
        'Failed',
        'Plan',
        'Partitions',
        'Merge',
        'WhatNext',
      ].sort(),
    );
    const map = definition.States.Partitions;
    expect(map).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.pending',
      MaxConcurrencyPath: '$.plan.concurrency',
    });
    const step = map.ItemProcessor.States.Step;
    const retry = step.Retry.find((r: { ErrorEquals: string[] }) =>
      r.ErrorEquals.includes('Inlet.Throttled'),
    );
    expect(retry).toMatchObject({ BackoffRate: 2, JitterStrategy: 'FULL', MaxAttempts: 8 });
    // A partition that fails ends its own iteration: the others' cursors survive to the failure report.
    expect(step.Catch[0]).toMatchObject({ ErrorEquals: ['States.ALL'], Next: 'PartitionFailed' });
    expect(definition.States.WhatNext.Choices).toContainEqual({
      Variable: '$.next',
      StringEquals: 'failed',
      Next: 'DescribeFailure',
    });
    expect(definition.States.ContinueAsNew.Parameters['StateMachineArn.$']).toBe('$$.StateMachine.Id');
    expect(machine.Properties.TracingConfiguration).toEqual({ Enabled: true });
    // Reconcile is off unless configured.
    expect(Object.keys(t.findResources('AWS::Events::Rule')).some((id) => id.includes('Reconcile'))).toBe(
      false,
    );
  });

  it('alarms on DLQs, message age, commit errors and stalled versions, to the alarm topic', () => {
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
    // 6 on Inlet's own metrics and queues, commit queue age, 4 x (errors, throttles), failed backfills.
    expect(alarms).toHaveLength(16);
    for (const alarm of alarms)
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^InletAlarms/) }]);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'StaleVersionsResent',
      Namespace: 'Inlet',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 1800,
    });
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
  });

  it("sends a created bucket's ObjectCreated notifications to the ingest queue, one per table prefix", () => {
    t.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        QueueConfigurations: [
          Match.objectLike({
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'clicks/' }] } },
          }),
          Match.objectLike({
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'orders/' }] } },
          }),
        ],
      },
    });
  });

  it('wires an imported bucket through EventBridge, without the notification custom resource', () => {
    const imported = template({ landingBucketName: 'existing-landing' });
    imported.resourceCountIs('Custom::S3BucketNotifications', 0);
    imported.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: {
          bucket: { name: ['existing-landing'] },
          object: { key: [{ prefix: 'clicks/' }, { prefix: 'orders/' }] },
        },
      },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateIngestQueue'), 'Arn'] },
        }),
      ],
    });
  });

  it('schedules reconcile per live table when asked, and alarms when it finds missing files', () => {
    const r = template({
      tables: [...TABLES, { name: 'orders_v2', prefix: 'orders/', live: false }],
      pipeline: { reconcile: { every: Duration.hours(1) } },
    });
    const rules = Object.values(r.findResources('AWS::Events::Rule')).filter(
      (rule) => rule.Properties.ScheduleExpression === 'rate(1 hour)',
    );
    const inputs = rules.map((rule) => JSON.parse(rule.Properties.Targets[0].Input));
    expect(inputs).toEqual([
      { table: 'orders', mode: 'reconcile', lookbackSeconds: 8100, settleSeconds: 900 },
      { table: 'clicks', mode: 'reconcile', lookbackSeconds: 8100, settleSeconds: 900 },
    ]);
    r.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ReconcileFilesMissing' });
    expect(() =>
      template({ pipeline: { reconcile: { every: Duration.hours(1), lookback: Duration.hours(1) } } }),
    ).toThrow(/reconcile.lookback: must exceed every \+ settle/);
  });

  it('outputs every name the CLI needs', () => {
    // The Glue database's only with a catalogued bronze table (test/infra/catalog.test.ts).
    for (const name of Object.values(OUTPUTS)) if (name !== OUTPUTS.glueDatabase) t.hasOutput(name, {});
  });
});

describe('props validation', () => {
  it('rejects conflicting props at synth, listing every problem', () => {
    const stack = new Stack(app(), 'Bad');
    expect(
      () =>
        new IngestionPipeline(stack, 'P', {
          tables: [{ name: 'Orders!' }, { name: 'a' }, { name: 'a' }],
          batchSize: 20_000,
          batchingWindow: Duration.minutes(6),
          maxConcurrency: 1,
          leaseDuration: Duration.minutes(2),
        }),
    ).toThrow(
      /tables\[0\]\.name: table names are[\s\S]*duplicate table name 'a'[\s\S]*batchSize: must be 1-10,000[\s\S]*batchingWindow: at most 5 minutes[\s\S]*maxConcurrency: must be 2-1000[\s\S]*leaseDuration \(120s\) must exceed batcherTimeout \(300s\)/,
    );
  });

  it('collapses overlapping notification prefixes, which S3 would reject', () => {
    expect(notificationPrefixes([{ prefix: 'a/' }, { prefix: 'a/b/' }, { prefix: 'c/' }])).toEqual([
      'a/',
      'c/',
    ]);
    expect(notificationPrefixes([{ prefix: 'a/' }, {}])).toEqual(['']);
  });

  it('accepts an explicit eventbridge mode on a created bucket', () => {
    const stack = new Stack(app(), 'Eb');
    new IngestionPipeline(stack, 'P', {
      tables: [{ name: 't', prefix: 'x/' }],
      eventMode: 'eventbridge',
      landingBucket: new Bucket(stack, 'B'),
    });
    Template.fromStack(stack).hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: { EventBridgeConfiguration: {} },
    });
  });
});

describe('cdk context', () => {
  it('reads defaults and -c overrides, tables as JSON text', () => {
    const values: Record<string, unknown> = {
      'inlet:tables': '[{"name":"t","prefix":"p/"}]',
      'inlet:batchSize': '500',
      'inlet:removalPolicy': 'destroy',
    };
    const { stackName, props } = readContext((key) => values[key]);
    expect(stackName).toBe('Inlet');
    expect(props.tables).toEqual([{ name: 't', prefix: 'p/' }]);
    expect(props.pipeline?.batchSize).toBe(500);
  });

  it('says which key is wrong', () => {
    expect(() => readContext((key) => ({ 'inlet:tables': [], 'inlet:eventMode': 'sns' })[key])).toThrow(
      /inlet:tables: [\s\S]*inlet:eventMode/,
    );
  });
});

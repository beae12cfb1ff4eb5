// Deploy-time defects that moto's CloudFormation ignores:
// each asserted on the synthesized template, the only place they can be seen before a real deploy.
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { IngestionPipeline } from '../../infra/ingestion-pipeline.ts';
import { InletStack } from '../../infra/inlet-stack.ts';
import { parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../../shared/kernel/defaults.ts';
import { cdkApp } from './cdk-app.ts';

const app = cdkApp;

const TABLES = [
  { name: 'orders', prefix: 'orders/' },
  { name: 'clicks', prefix: 'clicks/', suffix: '.json' },
];

function template(props: Partial<ConstructorParameters<typeof InletStack>[2]> = {}): Template {
  return Template.fromStack(new InletStack(app(), 'Test', { tables: TABLES, ...props }));
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

function roleStatements(t: Template, policyPrefix: string): Statement[] {
  return Object.entries(t.findResources('AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(policyPrefix))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
}

const grants = (statements: Statement[], action: string) =>
  statements.filter((s) => [s.Action].flat().includes(action)).flatMap((s) => [s.Resource].flat());

describe('alarm topic (item 16)', () => {
  it('lets CloudWatch publish alarms, only from this account and its alarms', () => {
    template().hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnLike: {
                'aws:SourceArn': {
                  'Fn::Join': [
                    '',
                    [
                      'arn:',
                      { Ref: 'AWS::Partition' },
                      ':cloudwatch:',
                      { Ref: 'AWS::Region' },
                      ':',
                      { Ref: 'AWS::AccountId' },
                      ':alarm:*',
                    ],
                  ],
                },
              },
            },
          }),
        ]),
      },
    });
  });
});

describe('ledger removal (item 17)', () => {
  it('turns deletion protection off with removalPolicy destroy, so cdk destroy can delete the ledger', () => {
    const t = template({ pipeline: { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: true } });
    t.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: false });
    template().hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: true });
  });
});

describe('Lambda environment size (item 18)', () => {
  const manyTables = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      name: `table_with_a_long_name_${String(i).padStart(3, '0')}`,
      prefix: `some/landing/prefix/${i}/`,
      suffix: '.parquet',
    }));

  it('refuses at synth a configuration past the 4 KB limit, saying how many tables fit', () => {
    expect(() => template({ tables: manyTables(60) })).toThrow(
      /environment[\s\S]*4 KB[\s\S]*60 tables[\s\S]*at most \d+ tables? (like these )?fit/i,
    );
  });

  it('keeps every function of the default configuration well under the limit', () => {
    const t = template();
    for (const fn of Object.values(t.findResources('AWS::Lambda::Function'))) {
      const vars = fn.Properties.Environment?.Variables as Record<string, unknown> | undefined;
      if (!vars) continue;
      expect(JSON.stringify(vars).length).toBeLessThan(2048);
    }
    expect(() => template({ tables: manyTables(10) })).not.toThrow();
  });
});

describe('state machine logs (item 19)', () => {
  it('writes to a log group under /aws/vendedlogs/states/', () => {
    const t = template();
    const groups = Object.values(t.findResources('AWS::Logs::LogGroup')).map(
      (g) => g.Properties.LogGroupName as string | undefined,
    );
    expect(groups.filter((name) => name?.startsWith('/aws/vendedlogs/states/'))).toHaveLength(1);
  });
});

describe('alarms (item 20, item 10)', () => {
  const t = template();
  const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map(
    (a) => a.Properties as Record<string, unknown>,
  );

  it('alarms on failed backfill executions, per-function errors and throttles, commit queue age', () => {
    expect(
      alarms.filter((a) => a.MetricName === 'ExecutionsFailed' && a.Namespace === 'AWS/States'),
    ).toHaveLength(1);
    for (const metric of ['Errors', 'Throttles']) {
      expect(alarms.filter((a) => a.MetricName === metric && a.Namespace === 'AWS/Lambda')).toHaveLength(4);
    }
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateCommitQueue'), 'QueueName'] },
        },
      ],
    });
    for (const alarm of alarms)
      expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^InletAlarms/) }]);
  });

  it('does not alarm on routine ingest retries: the age must stay high for several minutes', () => {
    const age = alarms.find(
      (a) =>
        a.MetricName === 'ApproximateAgeOfOldestMessage' &&
        JSON.stringify(a.Dimensions).includes('InletStateIngestQueue'),
    );
    expect(age).toMatchObject({ Threshold: 1800, EvaluationPeriods: 5, DatapointsToAlarm: 5 });
  });

  it('gives the EventBridge rule target a DLQ, and alarms when it holds anything', () => {
    const eb = template({ landingBucketName: 'existing-landing', landingBucketVersioned: true });
    eb.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ source: ['aws.s3'] }),
      Targets: [
        Match.objectLike({
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletEventsDlq'), 'Arn'] } },
        }),
      ],
    });
    eb.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletEventsDlq'), 'QueueName'] },
        },
      ],
    });
  });
});

describe('S3 -> SQS permissions and partitions (item 21)', () => {
  it('lets S3 send to the ingest queue only from this account and the landing bucket', () => {
    template().hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 's3.amazonaws.com' },
            Condition: {
              ArnLike: {
                'aws:SourceArn': { 'Fn::GetAtt': [Match.stringLikeRegexp('^InletStateLanding'), 'Arn'] },
              },
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            },
          }),
        ]),
      },
    });
  });

  it('builds every ARN with the stack partition, including other buckets a table reads', () => {
    const t = template({
      tables: [...TABLES, { name: 'other', prefix: 'x/', bucket: 'another-bucket' } as never],
    });
    expect(JSON.stringify(t.toJSON()).match(/arn:aws:[^"]*/g)).toBeNull();
  });
});

describe('buckets (item 22, item 2, item 4)', () => {
  it('refuses a manifest bucket that is the landing bucket when table prefixes overlap what Inlet writes', () => {
    const stack = new Stack(app(), 'Loop');
    const shared = new Bucket(stack, 'Shared');
    expect(
      () =>
        new IngestionPipeline(stack, 'P', {
          tables: [{ name: 'all' }],
          landingBucket: shared,
          manifestBucket: shared,
        }),
    ).toThrow(/manifestBucket: [\s\S]*landing bucket[\s\S]*'all'/);
    const other = new Stack(app(), 'NoLoop');
    const same = new Bucket(other, 'Shared');
    expect(
      () =>
        new IngestionPipeline(other, 'P', {
          tables: [{ name: 'orders', prefix: 'incoming/orders/' }],
          landingBucket: same,
          manifestBucket: same,
        }),
    ).not.toThrow();
  });

  it("refuses a shared landing and manifest bucket when a table's prefix covers a bronze table's default root", () => {
    // The sink writes s3://<manifest bucket>/<table>/_bronze/...: a landing table over it ingests them (F20).
    const stack = new Stack(app(), 'BronzeLoop');
    const shared = new Bucket(stack, 'Shared');
    expect(
      () =>
        new IngestionPipeline(stack, 'P', {
          tables: [
            { name: 'x', prefix: 'in/x/', bronze: { format: 'json' } },
            { name: 'y', prefix: 'x/_bronze/' },
          ],
          landingBucket: shared,
          manifestBucket: shared,
        }),
    ).toThrow(/manifestBucket: [\s\S]*'y'[\s\S]*'x\/_bronze\/'/);
  });

  it('aborts incomplete multipart uploads on both created buckets', () => {
    const buckets = Object.values(template().findResources('AWS::S3::Bucket'));
    expect(buckets).toHaveLength(2);
    for (const bucket of buckets) {
      expect(bucket.Properties.LifecycleConfiguration?.Rules).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
            Status: 'Enabled',
          }),
        ]),
      );
    }
  });

  it('never expires a current staged list (only its batch commit deletes it), keeps noncurrent cleanup', () => {
    const t = template();
    const rules = Object.values(t.findResources('AWS::S3::Bucket')).flatMap(
      (b) => (b.Properties.LifecycleConfiguration?.Rules ?? []) as Record<string, unknown>[],
    );
    const staging = rules.filter((r) => r.Prefix === '_staging/');
    expect(staging).toHaveLength(1);
    expect(staging[0]).not.toHaveProperty('ExpirationInDays');
    expect(staging[0]).not.toHaveProperty('ExpirationDate');
    expect(staging[0]).toMatchObject({
      NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      ExpiredObjectDeleteMarker: true,
    });
    const committer = roleStatements(t, 'InletFunctionsCommitterServiceRoleDefaultPolicy');
    expect(grants(committer, 's3:DeleteObject')).toEqual([
      {
        'Fn::Join': [
          '',
          [{ 'Fn::GetAtt': [expect.stringMatching(/^InletStateManifests/), 'Arn'] }, '/_staging/*'],
        ],
      },
    ]);
  });

  it('versions a created landing bucket when a table allows overwrites', () => {
    template({
      tables: [{ name: 'orders', prefix: 'orders/', allowOverwrites: true }],
    }).resourcePropertiesCountIs('AWS::S3::Bucket', { VersioningConfiguration: { Status: 'Enabled' } }, 2);
  });

  it('refuses allowOverwrites on an imported landing bucket not declared versioned, saying what to do', () => {
    const tables = [{ name: 'orders', prefix: 'orders/', allowOverwrites: true }];
    expect(() => template({ tables, landingBucketName: 'existing' })).toThrow(
      /allowOverwrites[\s\S]*'orders'[\s\S]*versioning[\s\S]*landingBucketVersioned/,
    );
    expect(() =>
      template({ tables, landingBucketName: 'existing', landingBucketVersioned: true }),
    ).not.toThrow();
  });
});

describe('sweeper (issue 10 item 3)', () => {
  it('may scan the sparse sealed index, and only that index', () => {
    const sweeper = roleStatements(template(), 'InletFunctionsSweeperServiceRoleDefaultPolicy');
    expect(grants(sweeper, 'dynamodb:Scan')).toEqual([
      {
        'Fn::Join': [
          '',
          [{ 'Fn::GetAtt': [expect.stringMatching(/^InletStateLedger/), 'Arn'] }, '/index/sealed'],
        ],
      },
    ]);
  });
});

describe('one source for defaults', () => {
  it("the functions' configuration carries the construct's default lease", () => {
    const stack = new InletStack(cdkApp(), 'Defaults', { tables: [{ name: 'orders', prefix: 'orders/' }] });
    const fns = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    const configs = Object.values(fns)
      .map(
        (f) => (f as { Properties: { Environment?: { Variables?: { INLET_CONFIG?: string } } } }).Properties,
      )
      .map((p) => p.Environment?.Variables?.INLET_CONFIG)
      .filter((c): c is string => typeof c === 'string');
    expect(configs.length).toBeGreaterThan(0);
    for (const config of configs) expect(JSON.parse(config).leaseSeconds).toBe(DEFAULTS.leaseSeconds);
    expect(parsePipelineConfig({ tables: [{ name: 'orders' }] }).leaseSeconds).toBe(DEFAULTS.leaseSeconds);
  });
});

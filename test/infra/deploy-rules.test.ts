// Rules AWS enforces when a stack deploys (or, for a few, silently afterwards) that neither CDK nor moto's
// CloudFormation checks: each is one test over every resource of several synthesized stacks, the default
// `cdk deploy` (cdk.json's context) among them, with the page that documents it. docs/aws-behaviour.md,
// "Deploy time", lists the same rules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { readContext } from '../../infra/context.ts';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { projectRoot } from '../../local/paths.ts';
import { cdkApp } from './cdk-app.ts';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
  context: Record<string, unknown>;
};

/** `cdk deploy` with the repository's cdk.json, exactly as infra/app.ts builds it. */
const DEFAULT_STACK = readContext((key) => cdkJson.context[key]).props;

const BRONZE_TABLES: InletStackProps['tables'] = [
  {
    name: 'orders',
    prefix: 'orders/',
    bronze: { format: 'json', cleanSource: { action: 'move', moveTo: 's3://archive/old' } },
  },
  { name: 'audit', prefix: 'orders/', bronze: { format: 'json', nudgeEveryMinutes: 1440 } },
  { name: 'clicks', prefix: 'clicks/', suffix: '.csv', bronze: { format: 'csv', location: 's3://lake/c' } },
  { name: 'nested', prefix: 'clicks/eu/' },
  { name: 'all', prefix: 'other/' },
];

const STACKS: Record<string, InletStackProps> = {
  'the default cdk deploy (cdk.json)': DEFAULT_STACK,
  'bronze tables with cleanSource, nested prefixes': { tables: BRONZE_TABLES },
  'eventbridge mode on an imported bucket, big batches': {
    tables: BRONZE_TABLES,
    landingBucketName: 'existing-landing',
    landingBucketVersioned: true,
    pipeline: { batchSize: 5000, batchingWindow: Duration.seconds(5), maxConcurrency: 2 },
  },
  'small batches, a short batcher timeout': {
    tables: [{ name: 'orders', prefix: 'orders/', bronze: { format: 'jsonl' } }],
    pipeline: { batchSize: 10, batcherTimeout: Duration.seconds(10), maxConcurrency: 1000 },
  },
};

const synthesized = Object.entries(STACKS).map(([name, props]) => ({
  name,
  resources: Template.fromStack(new InletStack(cdkApp(), 'Rules', props)).toJSON().Resources as Resources,
}));

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
function refOf(value: unknown): string | undefined {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
}

const ofType = (resources: Resources, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

const isFifo = (resources: Resources, id: string | undefined) =>
  id !== undefined && resources[id]?.Properties?.FifoQueue === true;

const q = (props: Record<string, unknown> = {}) => ({ Type: 'AWS::SQS::Queue', Properties: props });
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const fifo = q({ FifoQueue: true });
const esm = (props: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: { EventSourceArn: getAtt('Q'), FunctionName: { Ref: 'F' }, ...props },
});
const fn = (timeout: number) => ({ Type: 'AWS::Lambda::Function', Properties: { Timeout: timeout } });
const rule = (target: Record<string, unknown>) => ({
  Type: 'AWS::Events::Rule',
  Properties: { Targets: [{ Arn: getAtt('Q'), ...target }] },
});
const schedule = (target: Record<string, unknown>) => ({
  Type: 'AWS::Scheduler::Schedule',
  Properties: { Target: { Arn: getAtt('Q'), ...target } },
});
const alarm = (props: Record<string, unknown>) => ({ Type: 'AWS::CloudWatch::Alarm', Properties: props });

/**
 * Each rule: what AWS documents, where, the violations it finds in one template, and a template that breaks
 * it (so a rule that can never fail is caught too).
 */
const RULES: {
  rule: string;
  source: string;
  violations: (resources: Resources) => string[];
  broken: Resources;
}[] = [
  {
    rule: "an EventBridge rule target's dead-letter queue is a standard SQS queue",
    // "EventBridge DLQs are standard Amazon SQS queues"; PutTargets with a FIFO DLQ answers
    // ValidationException "SQS FIFO is not supported by Dead Letter Queues." (as captured in CloudTrail:
    // https://dev.classmethod.jp/articles/tsnote-eventbridge-can-a-fifo-queue-be-specified-as-the-dead-letter-queue-for-an-eventbridge-rule)
    source: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/rule-dlq.html',
    broken: { Q: q(), D: fifo, R: rule({ DeadLetterConfig: { Arn: getAtt('D') } }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Events::Rule').flatMap(([id, rule]) =>
        ((rule.Properties?.Targets ?? []) as { DeadLetterConfig?: { Arn?: unknown } }[])
          .map((t) => refOf(t.DeadLetterConfig?.Arn))
          .filter((dlq) => isFifo(resources, dlq))
          .map((dlq) => `${id}: DLQ ${dlq} is FIFO`),
      ),
  },
  {
    rule: "an EventBridge rule target's dead-letter queue lets EventBridge send to it, for that rule only",
    // Without the queue policy EventBridge cannot deliver to the DLQ (InvocationsFailedToBeSentToDLQ).
    source: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/rule-dlq.html',
    broken: { Q: q(), D: q(), R: rule({ DeadLetterConfig: { Arn: getAtt('D') } }) },
    violations: (resources) => {
      const policies = ofType(resources, 'AWS::SQS::QueuePolicy').map(([, p]) =>
        JSON.stringify(p.Properties),
      );
      return ofType(resources, 'AWS::Events::Rule').flatMap(([id, rule]) =>
        ((rule.Properties?.Targets ?? []) as { DeadLetterConfig?: { Arn?: unknown } }[]).flatMap((t) => {
          const dlq = refOf(t.DeadLetterConfig?.Arn);
          if (!dlq) return [];
          const granted = policies.some(
            (p) =>
              p.includes(`"${dlq}"`) &&
              p.includes('"Service":"events.amazonaws.com"') &&
              p.includes('"sqs:SendMessage"') &&
              p.includes(`"aws:SourceArn":{"Fn::GetAtt":["${id}","Arn"]}`),
          );
          return granted ? [] : [`${id}: DLQ ${dlq} has no policy letting this rule send to it`];
        }),
      );
    },
  },
  {
    rule: "an SQS queue's redrive dead-letter queue is of the same type (FIFO with FIFO, standard with standard)",
    source:
      'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue.html',
    broken: {
      D: q(),
      Q: { ...fifo, Properties: { FifoQueue: true, RedrivePolicy: { deadLetterTargetArn: getAtt('D') } } },
    },
    violations: (resources) =>
      ofType(resources, 'AWS::SQS::Queue').flatMap(([id, queue]) => {
        const dlq = refOf(
          (queue.Properties?.RedrivePolicy as { deadLetterTargetArn?: unknown })?.deadLetterTargetArn,
        );
        if (!dlq) return [];
        return isFifo(resources, id) === isFifo(resources, dlq)
          ? []
          : [`${id} (${isFifo(resources, id) ? 'FIFO' : 'standard'}) has DLQ ${dlq} of the other type`];
      }),
  },
  {
    rule: 'an SQS event source with a batch size over 10 has a batching window of at least 1 s (standard queues: at most 10,000)',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html',
    broken: { Q: q(), F: fn(3), E: esm({ BatchSize: 100 }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Lambda::EventSourceMapping').flatMap(([id, esm]) => {
        const size = (esm.Properties?.BatchSize as number | undefined) ?? 10;
        const window = (esm.Properties?.MaximumBatchingWindowInSeconds as number | undefined) ?? 0;
        if (size > 10_000) return [`${id}: batch size ${size}`];
        return size > 10 && window < 1 ? [`${id}: batch size ${size} with a ${window} s window`] : [];
      }),
  },
  {
    rule: 'an SQS event source on a FIFO queue has a batch size of at most 10 and no batching window',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html',
    broken: { Q: fifo, F: fn(3), E: esm({ BatchSize: 10, MaximumBatchingWindowInSeconds: 1 }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Lambda::EventSourceMapping').flatMap(([id, esm]) => {
        if (!isFifo(resources, refOf(esm.Properties?.EventSourceArn))) return [];
        const size = (esm.Properties?.BatchSize as number | undefined) ?? 10;
        const window = esm.Properties?.MaximumBatchingWindowInSeconds;
        return size > 10 || window !== undefined ? [`${id}: FIFO batch size ${size}, window ${window}`] : [];
      }),
  },
  {
    rule: "a function's timeout is at most its SQS event source queue's visibility timeout",
    // "Lambda validates this requirement when you create or update an event source mapping and will return
    // an error if the function timeout exceeds the queue's visibility timeout."
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html',
    broken: { Q: q({ VisibilityTimeout: 30 }), F: fn(60), E: esm({}) },
    violations: (resources) =>
      ofType(resources, 'AWS::Lambda::EventSourceMapping').flatMap(([id, esm]) => {
        const queue = resources[refOf(esm.Properties?.EventSourceArn) ?? '']?.Properties;
        const fn = resources[refOf(esm.Properties?.FunctionName) ?? '']?.Properties;
        const visibility = (queue?.VisibilityTimeout as number | undefined) ?? 30;
        const timeout = (fn?.Timeout as number | undefined) ?? 3;
        return timeout > visibility
          ? [`${id}: function timeout ${timeout} s > visibility ${visibility} s`]
          : [];
      }),
  },
  {
    rule: "an SQS event source's MaximumConcurrency is 2 to 1,000",
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html',
    broken: { Q: q(), F: fn(3), E: esm({ ScalingConfig: { MaximumConcurrency: 1 } }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Lambda::EventSourceMapping').flatMap(([id, esm]) => {
        const max = (esm.Properties?.ScalingConfig as { MaximumConcurrency?: number } | undefined)
          ?.MaximumConcurrency;
        return max !== undefined && (max < 2 || max > 1000) ? [`${id}: MaximumConcurrency ${max}`] : [];
      }),
  },
  {
    rule: 'an EventBridge rule target that is a FIFO queue names a message group id',
    // SqsParameters: "The custom parameters for EventBridge to use for a target that is an Amazon SQS fair
    // or FIFO queue", MessageGroupId "Required: Yes".
    source:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-events-rule-sqsparameters.html',
    broken: { Q: fifo, R: rule({}) },
    violations: (resources) =>
      ofType(resources, 'AWS::Events::Rule').flatMap(([id, rule]) =>
        ((rule.Properties?.Targets ?? []) as { Arn?: unknown; SqsParameters?: { MessageGroupId?: string } }[])
          .filter((t) => isFifo(resources, refOf(t.Arn)) && !t.SqsParameters?.MessageGroupId)
          .map(() => `${id}: FIFO target without MessageGroupId`),
      ),
  },
  {
    rule: 'a Scheduler schedule whose target is a FIFO queue names a message group id, and the queue deduplicates by content',
    // "If you specify an Amazon SQS FIFO queue as a target, the queue must have content-based deduplication
    // enabled."
    source: 'https://docs.aws.amazon.com/scheduler/latest/APIReference/API_SqsParameters.html',
    broken: { Q: fifo, S: schedule({ SqsParameters: { MessageGroupId: 't' } }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Scheduler::Schedule').flatMap(([id, schedule]) => {
        const target = schedule.Properties?.Target as {
          Arn?: unknown;
          SqsParameters?: { MessageGroupId?: string };
        };
        const queue = refOf(target?.Arn);
        if (!isFifo(resources, queue)) return [];
        const problems: string[] = [];
        if (!target.SqsParameters?.MessageGroupId) problems.push(`${id}: no MessageGroupId`);
        if (resources[queue ?? '']?.Properties?.ContentBasedDeduplication !== true)
          problems.push(`${id}: ${queue} has no content-based deduplication`);
        return problems;
      }),
  },
  {
    rule: "a Scheduler target's retry policy keeps 60-86,400 s and 0-185 attempts",
    source: 'https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html',
    broken: { Q: q(), S: schedule({ RetryPolicy: { MaximumEventAgeInSeconds: 30 } }) },
    violations: (resources) =>
      ofType(resources, 'AWS::Scheduler::Schedule').flatMap(([id, schedule]) => {
        const retry = (schedule.Properties?.Target as { RetryPolicy?: Record<string, number> })?.RetryPolicy;
        if (!retry) return [];
        const age = retry.MaximumEventAgeInSeconds ?? 86_400;
        const attempts = retry.MaximumRetryAttempts ?? 185;
        return age < 60 || age > 86_400 || attempts < 0 || attempts > 185
          ? [`${id}: age ${age} s, ${attempts} attempts`]
          : [];
      }),
  },
  {
    rule: "one bucket's S3 event notifications for one event type have no overlapping prefixes",
    // FilterRule: "Overlapping prefixes and suffixes are not supported." S3 refuses the configuration.
    source:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-s3-bucket-filterrule.html',
    broken: {
      N: {
        Type: 'Custom::S3BucketNotifications',
        Properties: {
          NotificationConfiguration: {
            QueueConfigurations: ['a/', 'a/b/'].map((Value) => ({
              Events: ['s3:ObjectCreated:*'],
              Filter: { Key: { FilterRules: [{ Name: 'prefix', Value }] } },
            })),
          },
        },
      },
    },
    violations: (resources) =>
      ofType(resources, 'Custom::S3BucketNotifications').flatMap(([id, n]) => {
        const configs = (
          (n.Properties?.NotificationConfiguration as { QueueConfigurations?: unknown[] })
            ?.QueueConfigurations ?? []
        ).map((c) => {
          const config = c as {
            Events: string[];
            Filter?: { Key?: { FilterRules?: { Name: string; Value: string }[] } };
          };
          const prefix =
            config.Filter?.Key?.FilterRules?.find((r) => r.Name.toLowerCase() === 'prefix')?.Value ?? '';
          return { events: config.Events, prefix };
        });
        return configs.flatMap((a, i) =>
          configs
            .slice(i + 1)
            .filter(
              (b) =>
                a.events.some((e) => b.events.includes(e)) &&
                (a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix)),
            )
            .map((b) => `${id}: '${a.prefix}' and '${b.prefix}' overlap`),
        );
      }),
  },
  {
    rule: 'an alarm period is 10, 20, 30 or a multiple of 60 s, spans at most a day (periods under an hour) or 7 days, and alarms on at most its evaluation periods',
    source: 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html',
    broken: { A: alarm({ Period: 900, EvaluationPeriods: 97 }) },
    violations: (resources) =>
      ofType(resources, 'AWS::CloudWatch::Alarm').flatMap(([id, alarm]) => {
        const p = alarm.Properties ?? {};
        const period = p.Period as number;
        const evaluations = p.EvaluationPeriods as number;
        const datapoints = (p.DatapointsToAlarm as number | undefined) ?? evaluations;
        const problems: string[] = [];
        if (![10, 20, 30].includes(period) && period % 60 !== 0) problems.push(`${id}: period ${period}`);
        if (period * evaluations > (period < 3600 ? 86_400 : 604_800))
          problems.push(`${id}: ${evaluations} x ${period} s`);
        if (datapoints > evaluations) problems.push(`${id}: ${datapoints} of ${evaluations}`);
        return problems;
      }),
  },
  {
    rule: 'a log group name is 1-512 characters of a-z, A-Z, 0-9, _, -, /, . and #',
    source: 'https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html',
    broken: { L: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: '/inlet/orders logs' } } },
    violations: (resources) =>
      ofType(resources, 'AWS::Logs::LogGroup').flatMap(([id, group]) => {
        const name = group.Properties?.LogGroupName;
        if (typeof name !== 'string') return []; // generated by CloudFormation
        return /^[A-Za-z0-9_\-/.#]{1,512}$/.test(name) ? [] : [`${id}: '${name}'`];
      }),
  },
];

describe('deploy-time rules AWS enforces and CDK does not check', () => {
  for (const { rule, source, violations, broken } of RULES) {
    it(`${rule} (${source})`, () => {
      expect(violations(broken as Resources), 'a template that breaks the rule').not.toEqual([]);
      const found = synthesized.flatMap(({ name, resources }) =>
        violations(resources).map((v) => `${name}: ${v}`),
      );
      expect(found).toEqual([]);
    });
  }

  it('checks something in every stack: each rule above has resources to look at', () => {
    for (const { name, resources } of synthesized) {
      for (const type of ['AWS::Events::Rule', 'AWS::Lambda::EventSourceMapping', 'AWS::CloudWatch::Alarm'])
        expect(ofType(resources, type).length, `${name}: ${type}`).toBeGreaterThan(0);
    }
  });
});

import { DescribeStackResourcesCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { OUTPUTS } from '../shared/kernel/names.ts';
import type { AwsClients } from './aws/clients.ts';
import { deployToEmulator, outsideStack } from './deploy.ts';
import { bindDeployed } from './iam/bind.ts';
import { type BoundStack, roleOwner } from './iam/policies.ts';
import type { HostedFunction } from './lambda/host.ts';
import type { CfnTemplate, SynthesizedStack } from './synth.ts';
import { LOCAL_TIMEOUT_SECONDS, localTimings } from './timings.ts';

/**
 * Local mode deploys the same stack definition with shorter timings, so a killed pipeline recovers in seconds
 * rather than the deployed 30 minutes of visibility timeout. Everything else (names, queues, keys, settings)
 * comes from the synthesized template.
 */
export const LOCAL_OVERRIDES: Record<string, unknown> = {
  ...localTimings(LOCAL_TIMEOUT_SECONDS),
  'inlet:batchingWindowSeconds': 1,
  'inlet:sweepIntervalSeconds': 60,
  'inlet:removalPolicy': 'destroy',
  'inlet:deletionProtection': false,
};

export type FunctionName = 'Batcher' | 'Committer' | 'Sweeper' | 'Backfill';

/** A Lambda SQS event source mapping of the template, with the queue it polls in the emulator. */
export interface EventSourceSettings {
  readonly functionLogicalId: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize: number;
  readonly batchingWindowMs: number;
  /** `FunctionResponseTypes: [ReportBatchItemFailures]`: else a batch is acknowledged or failed whole. */
  readonly reportBatchItemFailures: boolean;
  /** `ScalingConfig.MaximumConcurrency`, when the template sets one. */
  readonly maximumConcurrency?: number;
}

/** An EventBridge rule that invokes a function on a schedule (`rate(...)`), as the template defines it. */
export interface ScheduleSettings {
  readonly functionLogicalId: string;
  readonly everyMs: number;
  /** The target's `RetryPolicy.MaximumRetryAttempts` (EventBridge's default: 185). */
  readonly retryAttempts: number;
  /**
   * The target's `Input`, parsed: what the function receives instead of EventBridge's scheduled event (a
   * table's maintenance schedule sends `{"table": ...}`). Absent: the scheduled event itself (the sweeper's).
   */
  readonly input?: unknown;
}

export interface LocalStack {
  readonly stackName: string;
  readonly outputs: Record<string, string>;
  readonly tables: Array<{ name: string; prefix: string }>;
  /** logical id -> physical id, as the emulator's CloudFormation reports them. */
  readonly resources: Record<string, string>;
  /** Each Inlet function's environment in the template, resolved against the deployed resources. */
  readonly environment: Record<FunctionName, Record<string, string>>;
  /** The Node.js functions with a bundle: what local mode runs (local/lambda/host.ts). */
  readonly functions: readonly HostedFunction[];
  readonly eventSources: readonly EventSourceSettings[];
  readonly schedules: readonly ScheduleSettings[];
  readonly created: boolean;
  /** The template's roles and resource policies, bound to the deployed resources: what the IAM check uses. */
  readonly iam: BoundStack;
}

function functionLogicalId(template: CfnTemplate, name: FunctionName): string {
  const id = Object.keys(template.Resources).find(
    (key) =>
      key.startsWith(`InletFunctions${name}`) && template.Resources[key]?.Type === 'AWS::Lambda::Function',
  );
  if (!id) throw new Error(`the template has no ${name} function`);
  return id;
}

async function queueArn(clients: AwsClients, url: string): Promise<string> {
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? '';
}

/** The logical id a `Ref` or `Fn::GetAtt` names. */
const referenced = (value: unknown): string | undefined => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
};

/** EventBridge `rate(N unit)` in milliseconds (its only form the template uses). */
function rateMs(expression: string): number | undefined {
  const match = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!match) return undefined;
  const unit = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }[match[2]?.replace(/s$/, '') ?? 'minute'];
  return Number(match[1]) * (unit ?? 60_000);
}

async function eventSourcesOf(
  clients: AwsClients,
  template: CfnTemplate,
  resources: Record<string, string>,
): Promise<EventSourceSettings[]> {
  const sources: EventSourceSettings[] = [];
  for (const mapping of Object.values(template.Resources)) {
    if (mapping.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const p = mapping.Properties ?? {};
    const url = resources[referenced(p.EventSourceArn) ?? ''] ?? '';
    const maximumConcurrency = (p.ScalingConfig as { MaximumConcurrency?: number } | undefined)
      ?.MaximumConcurrency;
    sources.push({
      functionLogicalId: referenced(p.FunctionName) ?? '',
      queueUrl: url,
      queueArn: await queueArn(clients, url),
      // Lambda's defaults for SQS: 10 records, no batching window.
      batchSize: Number(p.BatchSize ?? 10),
      batchingWindowMs: Number(p.MaximumBatchingWindowInSeconds ?? 0) * 1000,
      reportBatchItemFailures: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes(
        'ReportBatchItemFailures',
      ),
      ...(maximumConcurrency ? { maximumConcurrency } : {}),
    });
  }
  return sources;
}

/**
 * The template's scheduled rules that invoke a Lambda function, with each target's rate, retries and input.
 * EventBridge passes a target with `Input` that JSON "and nothing from the event itself" (PutTargets, `Input`:
 * https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_Target.html).
 */
export function schedulesOf(template: CfnTemplate): ScheduleSettings[] {
  return Object.values(template.Resources).flatMap((rule) => {
    const p = rule.Properties ?? {};
    const everyMs =
      rule.Type === 'AWS::Events::Rule' ? rateMs(String(p.ScheduleExpression ?? '')) : undefined;
    if (!everyMs) return [];
    const targets = (p.Targets ?? []) as Array<{
      Arn?: unknown;
      RetryPolicy?: { MaximumRetryAttempts?: number };
      Input?: unknown;
    }>;
    return targets.flatMap((target) => {
      const id = referenced(target.Arn);
      if (!id || template.Resources[id]?.Type !== 'AWS::Lambda::Function') return [];
      if (target.Input !== undefined && typeof target.Input !== 'string')
        throw new Error(`the schedule of ${id} has an Input local mode cannot resolve`);
      return [
        {
          functionLogicalId: id,
          everyMs,
          retryAttempts: target.RetryPolicy?.MaximumRetryAttempts ?? 185,
          ...(target.Input === undefined ? {} : { input: JSON.parse(target.Input) as unknown }),
        },
      ];
    });
  });
}

/**
 * Deploys the Inlet stack to the emulator, or finds it there from an earlier run (a restart after a crash
 * must pick up the same queues and ledger), and describes what the local runner needs.
 */
export async function bringUpLocalStack(
  clients: AwsClients,
  overrides: Record<string, unknown> = {},
): Promise<LocalStack> {
  // The one path of local mode that needs CDK (seconds to load): imported here, not at the top, so the
  // CLI and the runner, which import this module for its types and settings, never load aws-cdk-lib.
  const { synthesizeInletStack, removeSynthesized, keepFunctionCode } = await import('./synth.ts');
  // Without CDK's built-in template validation, a WASM CloudFormation linter that was 6 of this synth's 7 s
  // (measured on 2 busy cores) on every `npm start`. The same stack definition is validated where it matters:
  // `cdk synth` / `cdk deploy` (cdk.json makes its findings errors), the deploy test's synth, and cfn-lint in
  // test/infra.
  const synthesized = synthesizeInletStack(
    { ...LOCAL_OVERRIDES, ...overrides },
    { validate: false, bundle: true },
  );
  try {
    return await describeLocalStack(clients, synthesized, keepFunctionCode(synthesized));
  } finally {
    removeSynthesized(synthesized);
  }
}

async function describeLocalStack(
  clients: AwsClients,
  synthesized: SynthesizedStack,
  code: Record<string, string>,
): Promise<LocalStack> {
  const { stackName, template } = synthesized;
  let created = false;
  const existing = await clients.cloudformation
    .send(new DescribeStacksCommand({ StackName: stackName }))
    .then((r) => r.Stacks?.[0])
    .catch(() => undefined);
  let outputs: Record<string, string>;
  let resources: Record<string, string>;
  if (existing?.StackStatus === 'CREATE_COMPLETE') {
    outputs = Object.fromEntries(
      (existing.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
    );
    const { StackResources } = await clients.cloudformation.send(
      new DescribeStackResourcesCommand({ StackName: stackName }),
    );
    resources = {
      ...outsideStack(template),
      ...Object.fromEntries(
        (StackResources ?? []).map((r) => [r.LogicalResourceId ?? '', r.PhysicalResourceId ?? '']),
      ),
    };
  } else {
    const deployment = await deployToEmulator(clients, synthesized);
    outputs = deployment.outputs;
    resources = deployment.resources;
    created = true;
  }

  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    const object = value as Record<string, unknown>;
    if ('Ref' in object) return resources[object.Ref as string] ?? '';
    throw new Error(`cannot resolve ${JSON.stringify(value)} for local mode`);
  };
  const environment = {} as Record<FunctionName, Record<string, string>>;
  for (const name of ['Batcher', 'Committer', 'Sweeper', 'Backfill'] as const) {
    const variables = ((
      template.Resources[functionLogicalId(template, name)]?.Properties?.Environment as {
        Variables?: Record<string, unknown>;
      }
    )?.Variables ?? {}) as Record<string, unknown>;
    environment[name] = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolve(v)]));
  }
  const functions = Object.entries(code).map(([logicalId, codeDir]) => ({
    logicalId,
    functionName: resources[logicalId] ?? '',
    codeDir,
    runtime: String(template.Resources[logicalId]?.Properties?.Runtime ?? ''),
    role: roleOwner(template, referenced(template.Resources[logicalId]?.Properties?.Role) ?? ''),
  }));
  const tables = (JSON.parse(outputs[OUTPUTS.tables] ?? '[]') as Array<{ name: string; prefix: string }>).map(
    ({ name, prefix }) => ({
      name,
      prefix,
    }),
  );
  return {
    stackName,
    outputs,
    tables,
    resources,
    environment,
    functions,
    eventSources: await eventSourcesOf(clients, template, resources),
    schedules: schedulesOf(template),
    created,
    iam: bindDeployed(template, resources, await clients.cloudformation.config.region()),
  };
}

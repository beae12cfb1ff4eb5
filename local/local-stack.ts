import { DescribeStackResourcesCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../shared/aws/clients.ts';
import { OUTPUTS } from '../shared/names.ts';
import { deployToEmulator } from './deploy.ts';
import { bindDeployed } from './iam/bind.ts';
import type { BoundStack } from './iam/policies.ts';
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
/** Functions a stack has only with some configurations: the bronze sink (a table with `bronze`). */
export type OptionalFunctionName = 'Sink';

export interface EventSourceSettings {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize: number;
  readonly batchingWindowMs: number;
}

export interface LocalStack {
  readonly stackName: string;
  readonly outputs: Record<string, string>;
  readonly tables: Array<{ name: string; prefix: string }>;
  /** Each function's environment as Lambda would see it, resolved against the deployed resources. */
  readonly environment: Record<FunctionName, Record<string, string>> &
    Partial<Record<OptionalFunctionName, Record<string, string>>>;
  readonly eventSources: Partial<Record<FunctionName, EventSourceSettings>>;
  readonly created: boolean;
  /** The template's roles and resource policies, bound to the deployed resources: what the IAM check uses. */
  readonly iam: BoundStack;
}

function functionLogicalId(
  template: CfnTemplate,
  name: FunctionName | OptionalFunctionName,
): string | undefined {
  const prefix = name === 'Sink' ? 'InletBronzeSink' : `InletFunctions${name}`;
  return Object.keys(template.Resources).find(
    (key) => key.startsWith(prefix) && template.Resources[key]?.Type === 'AWS::Lambda::Function',
  );
}

function requiredFunction(template: CfnTemplate, name: FunctionName): string {
  const id = functionLogicalId(template, name);
  if (!id) throw new Error(`the template has no ${name} function`);
  return id;
}

async function queueArn(clients: AwsClients, url: string): Promise<string> {
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? '';
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
  const { synthesizeInletStack, removeSynthesized } = await import('./synth.ts');
  // Without CDK's built-in template validation, a WASM CloudFormation linter that was 6 of this synth's 7 s
  // (measured on 2 busy cores) on every `npm start`. The same stack definition is validated where it matters:
  // `cdk synth` / `cdk deploy` (cdk.json makes its findings errors), the deploy test's synth, and cfn-lint in
  // test/infra.
  const synthesized = synthesizeInletStack({ ...LOCAL_OVERRIDES, ...overrides }, { validate: false });
  try {
    return await describeLocalStack(clients, synthesized);
  } finally {
    removeSynthesized(synthesized);
  }
}

async function describeLocalStack(clients: AwsClients, synthesized: SynthesizedStack): Promise<LocalStack> {
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
    resources = Object.fromEntries(
      (StackResources ?? []).map((r) => [r.LogicalResourceId ?? '', r.PhysicalResourceId ?? '']),
    );
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
  const environment = {} as LocalStack['environment'];
  const eventSources: Partial<Record<FunctionName, EventSourceSettings>> = {};
  const sink = functionLogicalId(template, 'Sink');
  if (sink) environment.Sink = environmentOf(template, sink, resolve);
  for (const name of ['Batcher', 'Committer', 'Sweeper', 'Backfill'] as const) {
    const id = requiredFunction(template, name);
    environment[name] = environmentOf(template, id, resolve);
    const mapping = Object.values(template.Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' &&
        (r.Properties?.FunctionName as { Ref?: string })?.Ref === id,
    );
    if (mapping) {
      const sourceArn = mapping.Properties?.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const queueLogical = sourceArn?.['Fn::GetAtt']?.[0] ?? '';
      const url = resources[queueLogical] ?? '';
      eventSources[name] = {
        queueUrl: url,
        queueArn: await queueArn(clients, url),
        batchSize: Number(mapping.Properties?.BatchSize ?? 10),
        batchingWindowMs: Number(mapping.Properties?.MaximumBatchingWindowInSeconds ?? 0) * 1000,
      };
    }
  }
  const tables = (JSON.parse(outputs[OUTPUTS.tables] ?? '[]') as Array<{ name: string; prefix: string }>).map(
    ({ name, prefix }) => ({
      name,
      prefix,
    }),
  );
  const iam = bindDeployed(template, resources, await clients.cloudformation.config.region());
  return { stackName, outputs, tables, environment, eventSources, created, iam };
}

/** A function's environment as Lambda would see it: the template's variables, references resolved. */
function environmentOf(
  template: CfnTemplate,
  id: string,
  resolve: (value: unknown) => string,
): Record<string, string> {
  const variables = ((
    template.Resources[id]?.Properties?.Environment as { Variables?: Record<string, unknown> }
  )?.Variables ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolve(v)]));
}

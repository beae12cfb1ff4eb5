import { readFileSync } from 'node:fs';
import {
  CreateStackCommand,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { CreateDatabaseCommand } from '@aws-sdk/client-glue';
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from './aws/clients.ts';
import type { CfnTemplate, SynthesizedStack } from './synth.ts';

const ACCOUNT = '123456789012';

export interface EmulatorDeployment {
  readonly stackName: string;
  /** Stack outputs by name. */
  readonly outputs: Record<string, string>;
  /** logical id -> physical id */
  readonly resources: Record<string, string>;
  /** Custom resources the emulator cannot run, and what was done instead. */
  readonly replaced: string[];
  /** `Type` of each resource the emulator's CloudFormation did not create (it skips types it lacks). */
  readonly skipped: string[];
}

const GLUE_DATABASE = 'AWS::Glue::Database';

const glueDatabaseName = (resource: CfnTemplate['Resources'][string]): string => {
  const name = (resource.Properties?.DatabaseInput as { Name?: unknown } | undefined)?.Name;
  if (typeof name !== 'string') throw new Error('a Glue database without a literal DatabaseInput.Name');
  return name;
};

/**
 * The resources the emulator's stack holds outside CloudFormation (its Glue databases), logical id -> the
 * physical id their `Ref` gives: DescribeStackResources does not list them, a resumed stack needs them too.
 */
export function outsideStack(template: CfnTemplate): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([, r]) => r.Type === GLUE_DATABASE)
      .map(([id, r]) => [id, glueDatabaseName(r)]),
  );
}

/** `value` with every `{ Ref: id }` replaced by `name`. */
function replaceRef(value: unknown, id: string, name: string): unknown {
  if (Array.isArray(value)) return value.map((v) => replaceRef(v, id, name));
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (Object.keys(object).length === 1 && object.Ref === id) return name;
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, replaceRef(v, id, name)]));
  }
  return value;
}

/** The logical ids a template value refers to: `Ref`, `Fn::GetAtt` and `Fn::Sub`'s `${Id}` / `${Id.Attr}`. */
function references(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) references(item, into);
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string') into.add(inner);
      else if (key === 'Fn::GetAtt')
        into.add(String(Array.isArray(inner) ? inner[0] : inner).split('.')[0] ?? '');
      else if (key === 'Fn::Sub') {
        const text = Array.isArray(inner) ? inner[0] : inner;
        for (const [, id] of String(text).matchAll(/\$\{([A-Za-z0-9]+)[.}]/g)) if (id) into.add(id);
        references(inner, into);
      } else references(inner, into);
    }
  }
  return into;
}

/**
 * What the emulator's CloudFormation needs changed, and nothing else:
 * - custom resources come out (their handler is a Lambda moto cannot invoke); the bucket-notification ones
 *   are applied with the S3 API after the stack, from the same properties;
 * - FIFO queues get an explicit `<stack>-<logical id>.fifo` name (AWS appends `.fifo` to generated names,
 *   moto does not and then rejects the queue);
 * - Lambda event source mappings come out: moto would consume the queues itself, try to run the function in
 *   Docker and lose the messages. Here the local runner is the event source mapping (local/runner.ts), with
 *   the settings read from these same resources;
 * - EventBridge Scheduler resources come out (the bronze tables' nudge schedules), with whatever refers to
 *   them (the role the schedules assume): moto's CloudFormation lacks the type and then refuses the template
 *   at the first `Fn::GetAtt` of one. Locally the sink still runs from its queue, fed by the commits' events;
 *   only the idle-table nudges are missing.
 * - The Glue database comes out (moto's CloudFormation has no `AWS::Glue::Database`) and is created with
 *   CreateDatabase after the stack; every `Ref` to it becomes its name, which is what the Ref returns.
 */
export function adaptForEmulator(
  template: CfnTemplate,
  stackName: string,
): { template: CfnTemplate; custom: Record<string, CfnTemplate['Resources'][string]> } {
  // Taken out of the template: custom resources and event source mappings.
  const custom: Record<string, CfnTemplate['Resources'][string]> = {};
  const resources: CfnTemplate['Resources'] = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (
      resource.Type.startsWith('Custom::') ||
      resource.Type.startsWith('AWS::Scheduler::') ||
      resource.Type === 'AWS::Lambda::EventSourceMapping' ||
      resource.Type === GLUE_DATABASE
    ) {
      custom[id] = resource;
      continue;
    }
    const properties = resource.Properties ?? {};
    if (resource.Type === 'AWS::SQS::Queue' && properties.FifoQueue && !properties.QueueName) {
      resource.Properties = { ...properties, QueueName: `${`${stackName}-${id}`.slice(0, 75)}.fifo` };
    }
    resources[id] = resource;
  }
  // What refers to a removed scheduler resource goes too, and then what refers to that (a role's policy).
  const gone = new Set(Object.keys(custom).filter((id) => custom[id]?.Type.startsWith('AWS::Scheduler::')));
  for (let changed = gone.size > 0; changed; ) {
    changed = false;
    for (const [id, resource] of Object.entries(resources)) {
      if (![...references(resource.Properties)].some((ref) => gone.has(ref))) continue;
      custom[id] = resource;
      gone.add(id);
      delete resources[id];
      changed = true;
    }
  }
  const databases = Object.entries(custom).filter(([, r]) => r.Type === GLUE_DATABASE);
  for (const [id, database] of databases) {
    const name = glueDatabaseName(database);
    for (const resource of Object.values(resources))
      if (resource.Properties)
        resource.Properties = replaceRef(resource.Properties, id, name) as typeof resource.Properties;
  }
  for (const resource of Object.values(resources)) {
    if (resource.DependsOn) {
      const kept = [resource.DependsOn].flat().filter((d) => !(d in custom));
      resource.DependsOn = kept.length > 0 ? kept : undefined;
      if (!resource.DependsOn) delete resource.DependsOn;
    }
  }
  return { template: { ...template, Resources: resources }, custom };
}

async function uploadAssets(clients: AwsClients, stack: SynthesizedStack, region: string): Promise<void> {
  const buckets = new Set<string>();
  for (const asset of stack.assets) {
    const bucket = asset.bucketName
      .replace(/\$\{AWS::AccountId\}/, ACCOUNT)
      .replace(/\$\{AWS::Region\}/, region);
    if (!buckets.has(bucket)) {
      // The bootstrap bucket `cdk bootstrap` would have made; a second deployment finds it there.
      await clients.s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: Error) => {
        if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
      });
      buckets.add(bucket);
    }
    // moto never runs Lambda code (local mode runs the bundle directories themselves): each code asset is an
    // empty zip, just the 22-byte end-of-central-directory record, which moto's CloudFormation reads where the
    // template points.
    const body =
      asset.packaging === 'zip'
        ? Buffer.concat([Buffer.from('PK\x05\x06', 'latin1'), Buffer.alloc(18)])
        : readFileSync(asset.path);
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: asset.objectKey, Body: body }));
  }
}

/** Creates the synthesized stack in the emulator's CloudFormation and waits for it. */
export async function deployToEmulator(
  clients: AwsClients,
  stack: SynthesizedStack,
  region = 'us-east-1',
): Promise<EmulatorDeployment> {
  await uploadAssets(clients, stack, region);
  const { template, custom: removed } = adaptForEmulator(structuredClone(stack.template), stack.stackName);
  await clients.cloudformation.send(
    new CreateStackCommand({
      StackName: stack.stackName,
      TemplateBody: JSON.stringify(template),
      Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'],
    }),
  );
  let status = 'CREATE_IN_PROGRESS';
  let outputs: Record<string, string> = {};
  for (let i = 0; i < 120 && status.endsWith('IN_PROGRESS'); i++) {
    const { Stacks } = await clients.cloudformation.send(
      new DescribeStacksCommand({ StackName: stack.stackName }),
    );
    status = Stacks?.[0]?.StackStatus ?? 'UNKNOWN';
    outputs = Object.fromEntries(
      (Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
    );
    if (status.endsWith('IN_PROGRESS')) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (status !== 'CREATE_COMPLETE') throw new Error(`stack ${stack.stackName} ended ${status}`);
  const { StackResources } = await clients.cloudformation.send(
    new DescribeStackResourcesCommand({ StackName: stack.stackName }),
  );
  const resources = Object.fromEntries(
    (StackResources ?? []).map((r) => [r.LogicalResourceId ?? '', r.PhysicalResourceId ?? '']),
  );

  const replaced: string[] = [];
  for (const [id, resource] of Object.entries(removed)) {
    if (resource.Type === 'AWS::Lambda::EventSourceMapping') {
      replaced.push(`${id} (${resource.Type}): run by the local runner instead`);
      continue;
    }
    if (resource.Type === GLUE_DATABASE) {
      const name = glueDatabaseName(resource);
      await clients.glue
        .send(new CreateDatabaseCommand({ DatabaseInput: { Name: name } }))
        .catch((error: Error) => {
          // A second deployment to the same emulator finds it.
          if (error.name !== 'AlreadyExistsException') throw error;
        });
      resources[id] = name;
      replaced.push(`${id} (${resource.Type}): created with CreateDatabase`);
      continue;
    }
    if (resource.Type !== 'Custom::S3BucketNotifications') {
      replaced.push(`${id} (${resource.Type}): skipped, not needed in the emulator`);
      continue;
    }
    const resolve = async (value: unknown): Promise<unknown> => {
      if (Array.isArray(value)) return Promise.all(value.map(resolve));
      if (value && typeof value === 'object') {
        const object = value as Record<string, unknown>;
        if ('Ref' in object) return resources[object.Ref as string];
        if ('Fn::GetAtt' in object) {
          const [logical, attribute] = object['Fn::GetAtt'] as [string, string];
          const physical = resources[logical] ?? '';
          if (attribute === 'Arn' && physical.startsWith('http')) {
            const { Attributes } = await clients.sqs.send(
              new GetQueueAttributesCommand({ QueueUrl: physical, AttributeNames: ['QueueArn'] }),
            );
            return Attributes?.QueueArn;
          }
          throw new Error(`cannot resolve Fn::GetAtt ${logical}.${attribute} for ${id}`);
        }
        return Object.fromEntries(
          await Promise.all(Object.entries(object).map(async ([k, v]) => [k, await resolve(v)])),
        );
      }
      return value;
    };
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: (await resolve(resource.Properties?.BucketName)) as string,
        NotificationConfiguration: (await resolve(resource.Properties?.NotificationConfiguration)) as Record<
          string,
          unknown
        >,
      }),
    );
    replaced.push(`${id} (${resource.Type}): applied with PutBucketNotificationConfiguration`);
  }
  const skipped = Object.entries(template.Resources)
    .filter(([id]) => !(id in resources))
    .map(([, resource]) => resource.Type);
  return { stackName: stack.stackName, outputs, resources, replaced, skipped: [...new Set(skipped)].sort() };
}

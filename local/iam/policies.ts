/**
 * The IAM side of a synthesized template, bound to the resources it was deployed as: each role's identity
 * policy and trust policy, each resource policy (bucket, queue, topic), the ledger's key schema (for
 * `dynamodb:LeadingKeys`) and the delivery edges. What the IAM check proxy evaluates requests against.
 */
import type { CfnTemplate } from '../synth.ts';

export const EMULATOR_ACCOUNT = '123456789012';

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface PolicyDocument {
  Version: '2012-10-17';
  Statement: PolicyStatement[];
}

export interface BoundRole {
  /** The role's logical id in the template, hash suffix removed: `InletFunctionsBatcherServiceRole`. */
  readonly name: string;
  readonly arn: string;
  /** Every identity policy of the role merged into one document, each statement's Sid `<policy>#<n>`. */
  readonly policy: PolicyDocument;
  readonly trust?: PolicyDocument;
  /** `<unbound template statement>` per Sid: what the calls-vs-grants table shows. */
  readonly grants: Record<string, string>;
}

export interface BoundStack {
  readonly account: string;
  readonly region: string;
  /** Function (or state machine) name -> its role. */
  readonly roles: Record<string, BoundRole>;
  /** Resource ARN -> its resource policy (bucket, queue, topic). */
  readonly resourcePolicies: Record<string, PolicyDocument>;
  /** DynamoDB table name -> its partition key attribute. */
  readonly partitionKeys: Record<string, string>;
}

/** What a logical id was deployed as: its Ref value and attributes (Arn ...) where CloudFormation says. */
export type Physical = Record<string, { readonly ref: string; readonly attributes?: Record<string, string> }>;

interface Env {
  readonly account: string;
  readonly region: string;
  readonly template: CfnTemplate;
  readonly physical: Physical;
}

const stripHash = (id: string) => id.replace(/[0-9A-F]{8}$/, '');

/** A resource's attribute as CloudFormation would return it, computed from its type and physical id. */
function attribute(env: Env, id: string, name: string): string {
  const given = env.physical[id]?.attributes?.[name];
  if (given) return given;
  const ref = ref_(env, id);
  const { account, region } = env;
  const type = env.template.Resources[id]?.Type ?? '';
  const arns: Record<string, () => string> = {
    'AWS::S3::Bucket': () => `arn:aws:s3:::${ref}`,
    'AWS::DynamoDB::Table': () => `arn:aws:dynamodb:${region}:${account}:table/${ref}`,
    'AWS::SQS::Queue': () => `arn:aws:sqs:${region}:${account}:${ref.split('/').at(-1)}`,
    'AWS::Lambda::Function': () => `arn:aws:lambda:${region}:${account}:function:${ref}`,
    'AWS::IAM::Role': () => `arn:aws:iam::${account}:role/${ref}`,
    'AWS::StepFunctions::StateMachine': () => ref,
    'AWS::SNS::Topic': () => ref,
    'AWS::Events::Rule': () => `arn:aws:events:${region}:${account}:rule/${ref}`,
    'AWS::Scheduler::ScheduleGroup': () => `arn:aws:scheduler:${region}:${account}:schedule-group/${ref}`,
    'AWS::Logs::LogGroup': () => `arn:aws:logs:${region}:${account}:log-group:${ref}:*`,
    'AWS::CloudWatch::Alarm': () => `arn:aws:cloudwatch:${region}:${account}:alarm:${ref}`,
  };
  if (name === 'Arn' || name === 'TopicArn') {
    const arn = arns[type];
    if (arn) return arn();
  }
  if (name === 'QueueName') return ref.split('/').at(-1) ?? ref;
  if (name === 'Name') return ref.split(':').at(-1) ?? ref;
  throw new Error(`IAM check: cannot resolve Fn::GetAtt ${id}.${name} (${type})`);
}

/**
 * A logical id's Ref. Resources the caller did not deploy (a harness creates only the stateful ones) keep a
 * name of their own: an ARN built from it matches nothing real, so nothing is allowed by accident.
 */
function ref_(env: Env, id: string): string {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': env.region,
    'AWS::AccountId': env.account,
    'AWS::URLSuffix': 'amazonaws.com',
  };
  if (pseudo[id]) return pseudo[id];
  const given = env.physical[id]?.ref;
  if (given) return given;
  // Not deployed: the name the template gives it, else its logical id.
  const resource = env.template.Resources[id];
  const properties = resource?.Properties ?? {};
  const named = ['Name', 'StateMachineName', 'QueueName', 'TopicName', 'BucketName', 'TableName', 'RoleName']
    .map((k) => properties[k])
    .find((v): v is string => typeof v === 'string');
  const name = named ?? id;
  const type = resource?.Type ?? '';
  if (type === 'AWS::StepFunctions::StateMachine')
    return `arn:aws:states:${env.region}:${env.account}:stateMachine:${name}`;
  if (type === 'AWS::SNS::Topic') return `arn:aws:sns:${env.region}:${env.account}:${name}`;
  if (type === 'AWS::SQS::Queue') return `https://sqs.${env.region}.amazonaws.com/${env.account}/${name}`;
  return name;
}

/** Resolves the intrinsic functions the template's policies use (Ref, Fn::GetAtt, Fn::Join). */
export function resolve(env: Env, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(env, v));
  if (!value || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (typeof o.Ref === 'string') return ref_(env, o.Ref);
  if (o['Fn::GetAtt']) {
    const [id, name] = (
      Array.isArray(o['Fn::GetAtt']) ? o['Fn::GetAtt'] : String(o['Fn::GetAtt']).split('.')
    ) as [string, string];
    return attribute(env, id, name);
  }
  if (o['Fn::Join']) {
    const [separator, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => String(resolve(env, p))).join(separator);
  }
  if (Object.keys(o).some((k) => k.startsWith('Fn::')))
    throw new Error(`IAM check: cannot resolve ${JSON.stringify(o)}`);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolve(env, v)]));
}

/** A template value as readable text with logical ids: `Manifests/_staging/*`, `arn:aws:s3:::lake`. */
export function render(value: unknown): string {
  if (Array.isArray(value)) return value.map(render).join(', ');
  if (typeof value === 'string') return value;
  const o = value as Record<string, unknown>;
  if (typeof o?.Ref === 'string')
    return o.Ref.startsWith('AWS::') ? (o.Ref === 'AWS::Partition' ? 'aws' : `<${o.Ref}>`) : stripName(o.Ref);
  if (o?.['Fn::GetAtt']) return stripName(String((o['Fn::GetAtt'] as string[])[0]));
  if (o?.['Fn::Join']) return ((o['Fn::Join'] as [string, unknown[]])[1] ?? []).map(render).join('');
  return JSON.stringify(value);
}

/** `InletStateManifestsB7D55FA9` -> `Manifests`, `InletBronzeSinkQueue208B7CA0` -> `SinkQueue`. */
function stripName(id: string): string {
  // CDK's singleton handlers also carry a 32-digit hash: `BucketNotificationsHandler050a...`.
  return (
    stripHash(id)
      .replace(/[0-9a-f]{32}/, '')
      .replace(/^Inlet(State|Functions|Bronze|Backfill)?/, '') || id
  );
}

/** The function (or service) a role belongs to: `Batcher`, `Sink`, `StateMachine`, `Scheduler`. */
export function roleOwner(template: CfnTemplate, roleId: string): string {
  for (const [id, r] of Object.entries(template.Resources)) {
    const role = (r.Properties?.Role ?? r.Properties?.RoleArn) as { 'Fn::GetAtt'?: string[] } | undefined;
    if (role?.['Fn::GetAtt']?.[0] !== roleId) continue;
    if (r.Type === 'AWS::Lambda::Function') return stripName(id);
    if (r.Type === 'AWS::StepFunctions::StateMachine') return 'StateMachine';
  }
  if (roleId.startsWith('SchedulerRoleForTarget')) return 'Scheduler';
  return stripName(roleId);
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * Binds the template's IAM to deployed resources: every role (with its identity policies merged and its
 * trust policy), every bucket, queue and topic policy, keyed by resource ARN.
 */
export function bindTemplate(
  template: CfnTemplate,
  physical: Physical,
  options: { account?: string; region?: string } = {},
): BoundStack {
  const env: Env = {
    account: options.account ?? EMULATOR_ACCOUNT,
    region: options.region ?? 'us-east-1',
    template,
    physical,
  };
  const roles: Record<string, BoundRole> = {};
  const generic = genericNames(template);
  const resourcePolicies: Record<string, PolicyDocument> = {};
  const partitionKeys: Record<string, string> = {};
  const resources = Object.entries(template.Resources);
  for (const [id, r] of resources) {
    if (r.Type !== 'AWS::IAM::Role') continue;
    const owner = roleOwner(template, id);
    const statements: PolicyStatement[] = [];
    const grants: Record<string, string> = {};
    // Sids S0, S1, ... in template order: the evaluator names the statements that allowed a request by them.
    const add = (document: { Statement: PolicyStatement[] }) => {
      for (const s of document.Statement) {
        const sid = `S${statements.length}`;
        grants[sid] = generic(describeStatement(s));
        statements.push({ ...(resolve(env, s) as PolicyStatement), Sid: sid });
      }
    };
    for (const inline of asArray(r.Properties?.Policies as { PolicyDocument: never }[]))
      add(inline.PolicyDocument);
    for (const [, p] of resources) {
      if (p.Type !== 'AWS::IAM::Policy') continue;
      const attached = asArray(p.Properties?.Roles as unknown[]).some(
        (role) => (role as { Ref?: string }).Ref === id,
      );
      if (attached) add(p.Properties?.PolicyDocument as { Statement: PolicyStatement[] });
    }
    roles[owner] = {
      name: stripHash(id),
      arn: attribute(env, id, 'Arn'),
      policy: { Version: '2012-10-17', Statement: statements },
      trust: resolve(env, r.Properties?.AssumeRolePolicyDocument) as PolicyDocument | undefined,
      grants,
    };
  }
  for (const [, r] of resources) {
    const p = r.Properties ?? {};
    const targets =
      r.Type === 'AWS::S3::BucketPolicy'
        ? [`arn:aws:s3:::${resolve(env, p.Bucket) as string}`]
        : r.Type === 'AWS::SQS::QueuePolicy'
          ? asArray(p.Queues).map(
              (q) => `arn:aws:sqs:${env.region}:${env.account}:${String(resolve(env, q)).split('/').at(-1)}`,
            )
          : r.Type === 'AWS::SNS::TopicPolicy'
            ? asArray(p.Topics).map((t) => String(resolve(env, t)))
            : [];
    for (const arn of targets) resourcePolicies[arn] = resolve(env, p.PolicyDocument) as PolicyDocument;
  }
  for (const [id, r] of resources) {
    if (r.Type !== 'AWS::DynamoDB::Table') continue;
    const hash = ((r.Properties?.KeySchema ?? []) as { AttributeName: string; KeyType: string }[]).find(
      (k) => k.KeyType === 'HASH',
    );
    if (hash) partitionKeys[ref_(env, id)] = hash.AttributeName;
  }
  return { account: env.account, region: env.region, roles, resourcePolicies, partitionKeys };
}

/**
 * A statement's text with the configuration's names made generic (`Manifests/<table>/_bronze/*`,
 * `arn:aws:s3:::<bucket>/<prefix>*`, `:table/<database>/<table>`): the same grant in stacks of other tables is
 * one grant in the report.
 */
function genericNames(template: CfnTemplate): (text: string) => string {
  const config = Object.values(template.Resources)
    .map(
      (r) => (r.Properties?.Environment as { Variables?: { INLET_CONFIG?: unknown } } | undefined)?.Variables,
    )
    .find((v) => typeof v?.INLET_CONFIG === 'string')?.INLET_CONFIG;
  const tables = config
    ? (JSON.parse(String(config)) as { tables: { name: string; prefix: string }[] }).tables
    : [];
  const names = [
    ...tables.filter((t) => t.prefix.endsWith('/')).map((t) => `/${t.prefix}`),
    ...tables.map((t) => `/${t.name}/`),
  ].sort((x, y) => y.length - x.length);
  return (text) => {
    const [head = '', condition] = text.split(' if ');
    const [actions, resources = ''] = head.split(' on ');
    const generic = resources.split(', ').map((r) => {
      let out = r
        .replace(/arn:aws:s3:::[a-z0-9][a-z0-9.-]*/g, 'arn:aws:s3:::<bucket>')
        .replace(/:stateMachine:[A-Za-z0-9_-]+/g, ':stateMachine:<backfill>')
        // A Glue table by its catalog name (`click_events` for table `click-events`), under its database.
        .replace(/(:table\/[^/,\s]+\/)[a-z0-9_]+$/, '$1<table>');
      for (const name of names) out = out.split(name).join('/<table>/');
      return out;
    });
    return `${actions} on ${[...new Set(generic)].join(', ')}${condition ? ` if ${condition}` : ''}`;
  };
}

/** `s3:GetObject, s3:PutObject on Manifests/*\/_manifests/* if {...}`: a statement as the docs show it. */
export function describeStatement(s: PolicyStatement): string {
  const actions = asArray(s.Action ?? s.NotAction).join(', ');
  const resources = asArray(s.Resource ?? (s.NotResource as unknown))
    .map(render)
    .join(', ');
  const condition = s.Condition ? ` if ${JSON.stringify(s.Condition)}` : '';
  return `${s.NotAction ? 'NOT ' : ''}${actions} on ${resources}${condition}`;
}

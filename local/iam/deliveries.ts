/**
 * Service-to-service deliveries the template defines, as the request each service makes: S3 notifications
 * and EventBridge rules sending to SQS (and rule DLQs), rules invoking a Lambda function or starting the
 * state machine through a role, Scheduler sending through its role, CloudWatch alarms publishing to SNS,
 * Step Functions assuming its role to invoke the backfill function. moto performs (or skips) these without
 * any policy, so each edge is evaluated here against the target's resource policy, or the role's trust
 * and identity policy, with the principal, action, resource, `aws:SourceArn` and `aws:SourceAccount` the
 * service sends (https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html).
 */
import type { CfnTemplate } from '../synth.ts';
import { type AuthzRequest, type Decision, evaluate } from './evaluator.ts';
import { type BoundStack, type PolicyDocument, resolve } from './policies.ts';

export interface Delivery {
  /** `S3 Landing -> IngestQueue`, `rule Committed-orders -> SinkDlq (dead letters)`. */
  readonly edge: string;
  readonly principal: string;
  /** The role the service assumes first, when it delivers through one. */
  readonly role?: string;
  readonly request: AuthzRequest;
}

export interface DeliveryDecision extends Delivery {
  readonly decision: Decision;
  readonly trust?: Decision;
}

type Resources = CfnTemplate['Resources'];
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const label = (id: string) =>
  id.replace(/[0-9A-F]{8}$/, '').replace(/^Inlet(State|Functions|Bronze|Backfill|Monitoring)?/, '');

/** Every delivery edge of the template, resolved as `bindTemplate` resolved the stack's policies. */
export function deliveries(template: CfnTemplate, stack: BoundStack): Delivery[] {
  const env = { account: stack.account, region: stack.region, template, physical: {} };
  const r = (value: unknown) => String(resolve(env, value));
  const source = (arn: string) => ({ 'aws:SourceArn': arn, 'aws:SourceAccount': stack.account });
  const found: Delivery[] = [];
  const resources: Resources = template.Resources;
  for (const [id, resource] of Object.entries(resources)) {
    const p = resource.Properties ?? {};
    if (resource.Type === 'Custom::S3BucketNotifications') {
      const bucket = `arn:aws:s3:::${r(p.BucketName)}`;
      const config = p.NotificationConfiguration as { QueueConfigurations?: { QueueArn: unknown }[] };
      for (const q of config.QueueConfigurations ?? [])
        found.push({
          edge: `S3 ${label(String((p.BucketName as { Ref?: string }).Ref ?? bucket))} -> ${r(q.QueueArn).split(':').at(-1)}`,
          principal: 's3.amazonaws.com',
          request: { action: 'sqs:SendMessage', resource: r(q.QueueArn), context: source(bucket) },
        });
    }
    if (resource.Type === 'AWS::Events::Rule') {
      const rule = r({ 'Fn::GetAtt': [id, 'Arn'] });
      for (const t of asArray(p.Targets as Record<string, unknown>[])) {
        const arn = r(t.Arn);
        const service = arn.split(':')[2];
        const action =
          service === 'sqs'
            ? 'sqs:SendMessage'
            : service === 'lambda'
              ? 'lambda:InvokeFunction'
              : 'states:StartExecution';
        found.push({
          edge: `rule ${label(id)} -> ${arn.split(/[:/]/).at(-1)}`,
          principal: 'events.amazonaws.com',
          ...(t.RoleArn ? { role: r(t.RoleArn) } : {}),
          request: { action, resource: arn, context: source(rule) },
        });
        const dlq = (t.DeadLetterConfig as { Arn?: unknown } | undefined)?.Arn;
        if (dlq)
          found.push({
            edge: `rule ${label(id)} -> ${r(dlq).split(':').at(-1)} (dead letters)`,
            principal: 'events.amazonaws.com',
            request: { action: 'sqs:SendMessage', resource: r(dlq), context: source(rule) },
          });
      }
    }
    if (resource.Type === 'AWS::Scheduler::Schedule') {
      const target = p.Target as { Arn: unknown; RoleArn: unknown };
      const group = `arn:aws:scheduler:${stack.region}:${stack.account}:schedule-group/${String(p.GroupName)}`;
      found.push({
        edge: `schedule ${label(id)} -> ${r(target.Arn).split(':').at(-1)}`,
        principal: 'scheduler.amazonaws.com',
        role: r(target.RoleArn),
        request: { action: 'sqs:SendMessage', resource: r(target.Arn), context: source(group) },
      });
    }
    if (resource.Type === 'AWS::CloudWatch::Alarm') {
      const alarm = `arn:aws:cloudwatch:${stack.region}:${stack.account}:alarm:${id}`;
      for (const action of asArray(p.AlarmActions))
        found.push({
          edge: `alarm ${label(id)} -> ${r(action).split(':').at(-1)}`,
          principal: 'cloudwatch.amazonaws.com',
          request: { action: 'sns:Publish', resource: r(action), context: source(alarm) },
        });
    }
    if (resource.Type === 'AWS::StepFunctions::StateMachine') {
      const machine = r({ Ref: id });
      const definition = JSON.stringify(p.DefinitionString);
      for (const [fnId, fn] of Object.entries(resources)) {
        if (fn.Type !== 'AWS::Lambda::Function' || !definition.includes(`"${fnId}"`)) continue;
        found.push({
          edge: `state machine ${label(id)} -> ${label(fnId)}`,
          principal: 'states.amazonaws.com',
          role: r(p.RoleArn),
          request: {
            action: 'lambda:InvokeFunction',
            resource: r({ 'Fn::GetAtt': [fnId, 'Arn'] }),
            context: source(machine),
          },
        });
      }
    }
  }
  return found;
}

/** A function's resource policy, from the template's `AWS::Lambda::Permission`s for it. */
function lambdaPolicies(template: CfnTemplate, stack: BoundStack): Record<string, PolicyDocument> {
  const env = { account: stack.account, region: stack.region, template, physical: {} };
  const policies: Record<string, PolicyDocument> = {};
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Permission') continue;
    const p = resource.Properties ?? {};
    const fn = String(resolve(env, p.FunctionName));
    const policy = policies[fn] ?? { Version: '2012-10-17', Statement: [] };
    policy.Statement.push({
      Effect: 'Allow',
      Principal: { Service: String(p.Principal) },
      Action: String(p.Action),
      Resource: fn,
      ...(p.SourceArn
        ? { Condition: { ArnLike: { 'aws:SourceArn': String(resolve(env, p.SourceArn)) } } }
        : {}),
    });
    policies[fn] = policy;
  }
  return policies;
}

/**
 * Each delivery evaluated: through a role, the service must be trusted by it (sts:AssumeRole with the same
 * source) and the role allowed the action, and the target's policy must not deny it; directly, the target's
 * resource policy must allow the service principal.
 */
export async function evaluateDeliveries(
  template: CfnTemplate,
  stack: BoundStack,
): Promise<DeliveryDecision[]> {
  const withLambda: BoundStack = {
    ...stack,
    resourcePolicies: { ...stack.resourcePolicies, ...lambdaPolicies(template, stack) },
  };
  const decisions: DeliveryDecision[] = [];
  for (const delivery of deliveries(template, stack)) {
    if (!delivery.role) {
      decisions.push({
        ...delivery,
        decision: await evaluate(withLambda, { arn: delivery.principal }, delivery.request),
      });
      continue;
    }
    const role = Object.values(stack.roles).find((candidate) => candidate.arn === delivery.role);
    const trust = await evaluate(
      { ...withLambda, resourcePolicies: role?.trust ? { [delivery.role]: role.trust } : {} },
      { arn: delivery.principal },
      { action: 'sts:AssumeRole', resource: delivery.role, context: delivery.request.context },
    );
    const session = `arn:aws:sts::${stack.account}:assumed-role/${delivery.role.split('/').at(-1)}/${delivery.principal}`;
    const decision = role
      ? await evaluate(withLambda, { arn: session, policy: role.policy }, delivery.request)
      : {
          allowed: false,
          result: 'Error: no such role in the template',
          allowedBy: [],
          resourceAllows: false,
        };
    decisions.push({ ...delivery, trust, decision });
  }
  return decisions;
}

/**
 * One request against a role's identity policy and the resource's policy, with a real IAM policy evaluator
 * (@cloud-copilot/iam-simulate: AWS's evaluation logic, condition operators, set operators, NotAction,
 * resource policies and service principals; it keeps only the context keys the Service Authorization
 * Reference lists for the action and resource type, as AWS does).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { BoundStack, PolicyDocument } from './policies.ts';

/** What AWS authorizes for one request (a request may need several: CopyObject reads one object, writes another). */
export interface AuthzRequest {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | string[]>>;
}

export interface Decision {
  readonly allowed: boolean;
  /** `Allowed`, `ImplicitlyDenied`, `ExplicitlyDenied`, or `Error: <why>` (an unmappable request). */
  readonly result: string;
  /** Sids of the role's statements that allow it (empty when only the resource policy does). */
  readonly allowedBy: readonly string[];
  /** The resource policy alone allows it (then no identity statement is needed for it). */
  readonly resourceAllows: boolean;
}

/** The resource policy that governs an ARN: an object's bucket's, a queue's, a topic's. */
export function resourcePolicyFor(stack: BoundStack, arn: string): PolicyDocument | undefined {
  if (arn.startsWith('arn:aws:s3:::'))
    return stack.resourcePolicies[`arn:aws:s3:::${arn.slice(13).split('/')[0]}`];
  return stack.resourcePolicies[arn];
}

/** An assumed-role session's ARN, as a Lambda function's requests carry it. */
export function sessionArn(roleArn: string, session: string): string {
  const [, , , , account, name] = roleArn.split(/[:/]/);
  return `arn:aws:sts::${account}:assumed-role/${name}/${session}`;
}

const memo = new WeakMap<object, Map<string, Promise<Decision>>>();

/**
 * Evaluates `request` made by `principal` (a role session ARN, or a service principal such as
 * `s3.amazonaws.com` with no identity policy). Memoized per policy set: most requests repeat (the same
 * queue, the same table), and one evaluation costs milliseconds.
 */
export function evaluate(
  stack: BoundStack,
  principal: { readonly arn: string; readonly policy?: PolicyDocument },
  request: AuthzRequest,
): Promise<Decision> {
  const owner = principal.policy ?? stack;
  const cache = memo.get(owner) ?? new Map<string, Promise<Decision>>();
  memo.set(owner, cache);
  const key = `${principal.arn}\n${request.action}\n${request.resource}\n${JSON.stringify(request.context)}`;
  let decision = cache.get(key);
  if (!decision) {
    if (cache.size > 50_000) cache.clear();
    decision = run(stack, principal, request);
    cache.set(key, decision);
  }
  return decision;
}

async function run(
  stack: BoundStack,
  principal: { readonly arn: string; readonly policy?: PolicyDocument },
  request: AuthzRequest,
): Promise<Decision> {
  const resourcePolicy = resourcePolicyFor(stack, request.resource);
  const response = await runSimulation(
    {
      request: {
        principal: principal.arn,
        action: request.action,
        resource: { resource: request.resource, accountId: stack.account },
        contextVariables: {
          // The SDK reaches AWS over HTTPS; the emulator's plain HTTP on loopback is not what AWS would see.
          'aws:SecureTransport': 'true',
          'aws:RequestedRegion': stack.region,
          ...(principal.policy
            ? { 'aws:PrincipalAccount': stack.account, 'aws:PrincipalType': 'AssumedRole' }
            : {}),
          ...request.context,
        },
      },
      identityPolicies: principal.policy ? [{ name: 'role', policy: principal.policy }] : [],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    },
    { simulationMode: 'Strict' },
  );
  if (response.resultType === 'error')
    return {
      allowed: false,
      result: `Error: ${JSON.stringify(response.errors)}`,
      allowedBy: [],
      resourceAllows: false,
    };
  const analysis =
    response.resultType === 'single' ? response.result.analysis : response.results[0]?.analysis;
  const sids = (statements: readonly { explain?: { identifier?: string } }[] | undefined) =>
    (statements ?? []).map((s) => s.explain?.identifier ?? '?');
  return {
    allowed: response.overallResult === 'Allowed',
    result: response.overallResult,
    allowedBy: sids(analysis?.identityAnalysis?.allowStatements as never),
    resourceAllows: (analysis?.resourceAnalysis?.allowStatements?.length ?? 0) > 0,
  };
}

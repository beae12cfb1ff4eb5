import { Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** Each acknowledged cdk-nag finding, with why it is acceptable here. */
export function acknowledgeNagFindings(scope: Construct): void {
  const v = Validations.of(scope);
  v.acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'Server access logs cost a log object per request; the ledger and CloudTrail data events are the audit trail. Users who need them enable them on their buckets.',
  });
  v.acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason: 'The basic execution role only lets the functions write their own logs.',
  });
  v.acknowledge({
    id: 'AwsSolutions-L1',
    reason:
      'nodejs22.x is the runtime the code targets and tests; the CDK-managed notification/auto-delete handlers pick their own.',
  });
}

/** A resolved ARN as cdk-nag names it in a finding id: `<Logical.Arn>/x`, `arn:<AWS::Partition>:...`. */
export function nagResource(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved;
  const r = resolved as { Ref?: string; 'Fn::GetAtt'?: string[]; 'Fn::Join'?: [string, unknown[]] };
  if (r.Ref) return `<${r.Ref}>`;
  if (r['Fn::GetAtt']) return `<${r['Fn::GetAtt'].join('.')}>`;
  if (r['Fn::Join']) return r['Fn::Join'][1].map(nagResource).join(r['Fn::Join'][0]);
  return JSON.stringify(resolved);
}

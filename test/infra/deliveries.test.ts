// Service-to-service deliveries (S3 -> SQS, EventBridge -> SQS/Lambda/Step Functions, Scheduler -> SQS,
// CloudWatch -> SNS, Step Functions -> Lambda) evaluated against the policies of the synthesized template,
// as the service's request: moto delivers without any policy, AWS only when these allow it.
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { type DeliveryDecision, evaluateDeliveries } from '../../local/iam/deliveries.ts';
import { bindTemplate } from '../../local/iam/policies.ts';
import type { CfnTemplate } from '../../local/synth.ts';
import { cdkApp } from './cdk-app.ts';

function template(props: Partial<InletStackProps>): CfnTemplate {
  const tables = [
    { name: 'orders', prefix: 'orders/', bronze: { format: 'json' as const } },
    { name: 'clicks', prefix: 'clicks/' },
  ];
  return Template.fromStack(
    new InletStack(cdkApp(), 'Deliveries', { tables, ...props }),
  ).toJSON() as CfnTemplate;
}

const refused = (decisions: DeliveryDecision[]) =>
  decisions
    .filter((d) => !d.decision.allowed || (d.trust && !d.trust.allowed))
    .map((d) => `${d.edge}: ${d.trust && !d.trust.allowed ? `trust ${d.trust.result}` : d.decision.result}`);

describe('deliveries between services', () => {
  it('S3 notifications, the sweep schedule, bronze rules and nudges, alarms and the state machine are each allowed', async () => {
    const t = template({});
    const decisions = await evaluateDeliveries(t, bindTemplate(t, {}));
    const kinds = decisions.map(
      (d) => `${d.edge.split(' ')[0]} ${d.request.action} ${d.request.resource.split(/[:/]/).at(-1)}`,
    );
    for (const expected of [
      /^S3 sqs:SendMessage InletStateIngestQueue/,
      /^rule lambda:InvokeFunction InletFunctionsSweeper/,
      /^rule lambda:InvokeFunction InletMaintenance/,
      /^rule sqs:SendMessage InletBronzeSinkQueue/,
      /^schedule sqs:SendMessage InletBronzeSinkQueue/,
      /^alarm sns:Publish InletAlarms/,
      /^state lambda:InvokeFunction InletFunctionsBackfill/,
    ])
      expect(kinds.some((k) => expected.test(k))).toBe(true);
    expect(refused(decisions)).toEqual([]);
  });

  it('eventbridge mode with reconcile: the S3 rule to the ingest queue and the reconcile rule through its role', async () => {
    const t = template({
      landingBucketName: 'existing-landing',
      pipeline: { reconcile: { every: Duration.hours(1) } },
    });
    const decisions = await evaluateDeliveries(t, bindTemplate(t, {}));
    expect(decisions.some((d) => d.edge.startsWith('rule ObjectCreated ->') && d.decision.allowed)).toBe(
      true,
    );
    expect(
      decisions.some(
        (d) => d.edge.startsWith('rule Reconcileorders') && d.trust?.allowed && d.decision.allowed,
      ),
    ).toBe(true);
    expect(refused(decisions)).toEqual([]);
  });

  it("refuses a delivery whose source the target's policy does not name (a bucket of another account, confused deputy)", async () => {
    const t = template({});
    const stack = bindTemplate(t, {});
    const decisions = await evaluateDeliveries(t, stack);
    const s3 = decisions.find((d) => d.edge.startsWith('S3 '));
    if (!s3) throw new Error('no S3 notification edge');
    const { evaluate } = await import('../../local/iam/evaluator.ts');
    const forged = await evaluate(
      stack,
      { arn: 's3.amazonaws.com' },
      {
        ...s3.request,
        context: { ...s3.request.context, 'aws:SourceAccount': '999999999999' },
      },
    );
    expect(forged.allowed).toBe(false);
  });

  // EventBridge writes a rule's undeliverable events to its DLQ only if the DLQ's policy lets
  // events.amazonaws.com send with that rule as source (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html).
  it('lets each rule write its dead letters to its DLQ', async () => {
    const t = template({ landingBucketName: 'existing-landing' });
    const decisions = await evaluateDeliveries(t, bindTemplate(t, {}));
    const dlq = decisions.filter((d) => d.edge.includes('(dead letters)'));
    // The bronze table's maintenance schedule (on by default) dead-letters its invocations too.
    expect(dlq.map((d) => d.edge.split(' ')[1]).sort()).toEqual([
      'Committedorders',
      'MaintenanceScheduleorders',
      'ObjectCreated',
    ]);
    expect(refused(dlq)).toEqual([]);
  });
});

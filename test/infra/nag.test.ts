// cdk-nag AwsSolutions on the variants `cdk synth` of cdk.json does not build (synth.test.ts covers that one):
// every finding must be fixed or acknowledged with its reason.
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { acknowledgeNagFindings } from '../../infra/nag.ts';
import { cdkApp } from './cdk-app.ts';

function synthWithNag(props: Partial<InletStackProps>): void {
  const app = cdkApp();
  const stack = new InletStack(app, 'Nag', { tables: [{ name: 'orders', prefix: 'orders/' }], ...props });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  app.synth();
}

describe('cdk-nag AwsSolutions', () => {
  it('passes an imported bucket via EventBridge (events DLQ), with reconcile and destroy', () => {
    expect(() =>
      synthWithNag({
        landingBucketName: 'existing-landing',
        pipeline: { reconcile: { every: Duration.hours(1) }, removalPolicy: RemovalPolicy.DESTROY },
      }),
    ).not.toThrow();
  });
});

// `npx cdk synth | deploy`: the Inlet stack, configured by cdk.json context (`-c inlet:key=value` overrides).
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readContext } from './context.ts';
import { InletStack } from './inlet-stack.ts';
import { acknowledgeNagFindings } from './nag.ts';

const app = new App();
const { stackName, props } = readContext((key) => app.node.tryGetContext(key));
const stack = new InletStack(app, stackName, {
  ...props,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'Inlet: exactly-once serverless file ingestion (S3 -> DynamoDB ledger -> manifest versions)',
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
acknowledgeNagFindings(stack);

import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetBucketNotificationConfigurationCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { deployToEmulator } from '../../local/deploy.ts';
import { removeSynthesized, type SynthesizedStack, synthesizeInletStack } from '../../local/synth.ts';
import { OUTPUTS } from '../../shared/kernel/names.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));

/**
 * The stack as local mode deploys it: without bundling, the template is the same but for the code assets'
 * hashes, and each function's code is still uploaded where the template points (moto's CloudFormation reads
 * it). Without CDK's built-in template validation (`validate: false`: aws-cdk-lib's
 * AppProps.builtinCloudFormationValidation), whose WASM validator starts at a process's first
 * synth. The two were most of this test's time (esbuild's five bundles, the validator's start: ~25 s of 39
 * on a loaded machine); test/infra/synth.test.ts runs both (`cdk synth`) and test/infra/cfn-lint.test.ts
 * lints the template.
 */
function synthesizeWithoutChecks(stackName: string): SynthesizedStack {
  return synthesizeInletStack(
    { 'inlet:stackName': stackName, 'inlet:deletionProtection': false },
    { validate: false },
  );
}

describe.skipIf(testTarget().kind === 'aws')("the synthesized stack on the emulator's CloudFormation", () => {
  it('creates the stateful resources as synthesized, and wires S3 notifications to the ingest queue', async () => {
    const stackName = uniqueName('InletSmoke');
    const stack = synthesizeWithoutChecks(stackName);
    // The assembly lives in the temp folder: gone once deployed, whatever the outcome.
    const deployment = await deployToEmulator(clients, stack).finally(() => removeSynthesized(stack));

    for (const name of Object.values(OUTPUTS)) expect(deployment.outputs[name], name).toBeTruthy();
    const { Table } = await clients.dynamodb.send(
      new DescribeTableCommand({ TableName: deployment.outputs[OUTPUTS.ledgerTable] }),
    );
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual(['sealed']);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');

    const ingest = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: deployment.outputs[OUTPUTS.ingestQueueUrl],
        AttributeNames: ['All'],
      }),
    );
    expect(JSON.parse(ingest.Attributes?.RedrivePolicy ?? '{}')).toMatchObject({ maxReceiveCount: 10 });
    expect(ingest.Attributes?.VisibilityTimeout).toBe('1800');
    const commit = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: deployment.outputs[OUTPUTS.commitQueueUrl],
        AttributeNames: ['All'],
      }),
    );
    expect(commit.Attributes?.FifoQueue).toBe('true');

    // moto's CloudFormation creates the bucket but ignores VersioningConfiguration (the template test asserts it).
    await clients.s3.send(new HeadBucketCommand({ Bucket: deployment.outputs[OUTPUTS.manifestBucket] }));
    const notifications = await clients.s3.send(
      new GetBucketNotificationConfigurationCommand({ Bucket: deployment.outputs[OUTPUTS.landingBucket] }),
    );
    expect(notifications.QueueConfigurations?.map((q) => q.QueueArn)).toEqual([
      ingest.Attributes?.QueueArn,
      ingest.Attributes?.QueueArn,
    ]);
    // The batcher's, the committer's and (cdk.json's tables have bronze sinks) the sink's event source
    // mappings; and the bronze tables' nudge schedules, their group and the role they assume (moto's
    // CloudFormation has no EventBridge Scheduler and refused the template at the role's GetAtt of the group).
    expect([...deployment.replaced].sort()).toEqual([
      expect.stringMatching(/BronzeCatalogDatabase.*AWS::Glue::Database.*CreateDatabase/),
      expect.stringMatching(/BronzeNudgeSchedules.*AWS::Scheduler::ScheduleGroup.*skipped/),
      expect.stringMatching(/BronzeNudgeclicks.*AWS::Scheduler::Schedule.*skipped/),
      expect.stringMatching(/BronzeNudgeorders.*AWS::Scheduler::Schedule.*skipped/),
      expect.stringMatching(/BronzeSink.*AWS::Lambda::EventSourceMapping.*local runner/),
      expect.stringMatching(/Batcher.*AWS::Lambda::EventSourceMapping.*local runner/),
      expect.stringMatching(/Committer.*AWS::Lambda::EventSourceMapping.*local runner/),
      expect.stringMatching(/Custom::S3BucketNotifications.*PutBucketNotificationConfiguration/),
      expect.stringMatching(/SchedulerRole.*AWS::IAM::Role.*skipped/),
      expect.stringMatching(/SchedulerRole.*AWS::IAM::Policy.*skipped/),
    ]);
    // What moto's CloudFormation lacks; docs/emulator.md "The template on the emulator" lists the same.
    console.log(`emulator CloudFormation skipped: ${deployment.skipped.join(', ')}`);
    expect(deployment.skipped).not.toContain('AWS::SQS::Queue');
    expect(deployment.skipped).not.toContain('AWS::DynamoDB::Table');
    expect(
      JSON.parse(deployment.outputs[OUTPUTS.tables] ?? '[]').map((t: { name: string }) => t.name),
    ).toEqual(['orders', 'clicks']);
  }, 120_000);
});

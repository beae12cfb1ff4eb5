import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GlueClient } from '@aws-sdk/client-glue';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { trackAttempts } from '../../shared/kernel/aws/attempts.ts';
import { type AwsTarget, clientConfig } from '../../shared/kernel/aws/target.ts';

/** Every SDK client Inlet uses, built for one target. */
export interface AwsClients {
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly sfn: SFNClient;
  readonly events: EventBridgeClient;
  readonly cloudformation: CloudFormationClient;
  /** Local mode reads deployed functions' configuration (the backfill executor). */
  readonly lambda: LambdaClient;
  /** The bronze tables' Glue entries (`inlet table`, local mode's database, the tests). */
  readonly glue: GlueClient;
}

/**
 * Builds the clients once; callers share them. For the tools (the CLI, local mode, the bench, the tests):
 * a function builds its own clients in its composition root (shared/runtime/).
 * @example
 * const clients = createClients(targetFromEnv() ?? { kind: 'aws' });
 */
export function createClients(target: AwsTarget): AwsClients {
  const config = clientConfig(target);
  const clients = {
    s3: new S3Client(config),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
    sfn: new SFNClient(config),
    events: new EventBridgeClient(config),
    cloudformation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    glue: new GlueClient(config),
  };
  for (const client of Object.values(clients)) trackAttempts(client);
  return clients;
}

export function destroyClients(clients: AwsClients): void {
  for (const client of Object.values(clients)) client.destroy();
}

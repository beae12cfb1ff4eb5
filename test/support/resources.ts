import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateDatabaseCommand } from '@aws-sdk/client-glue';
import { CreateBucketCommand, PutBucketNotificationConfigurationCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../../local/aws/clients.ts';
import { SEALED_INDEX } from '../../shared/ingestion/ledger-keys.ts';
import { uniqueName } from './names.ts';

export interface QueueRef {
  readonly url: string;
  readonly arn: string;
}

export interface PipelineResources {
  readonly ledgerTable: string;
  readonly landingBucket: string;
  readonly manifestBucket: string;
  readonly ingestQueue: QueueRef;
  readonly ingestDlq: QueueRef;
  readonly commitQueue: QueueRef;
  readonly commitDlq: QueueRef;
  /** The Glue database the stack would create for its bronze tables (`catalog`). */
  readonly glueDatabase: string;
}

export interface ResourceOptions {
  /** Seconds a received message stays invisible (Lambda: >= 6x the function timeout). @default 1 */
  readonly visibilityTimeout?: number;
  /** @default 50 */
  readonly maxReceiveCount?: number;
  /** Wire the landing bucket's ObjectCreated notifications to the ingest queue. @default true */
  readonly notifications?: boolean;
}

async function queue(
  clients: AwsClients,
  name: string,
  attributes: Record<string, string>,
): Promise<QueueRef> {
  const { QueueUrl } = await clients.sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (!QueueUrl) throw new Error(`no url for queue ${name}`);
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
}

/**
 * The pipeline's stateful resources with the settings the CDK construct uses, uniquely named so tests
 * run in parallel on one emulator. (Local mode derives these from the synthesized template instead.)
 */
export async function createPipelineResources(
  clients: AwsClients,
  options: ResourceOptions = {},
): Promise<PipelineResources> {
  const id = uniqueName('inlet');
  const visibility = String(options.visibilityTimeout ?? 1);
  const maxReceiveCount = options.maxReceiveCount ?? 50;
  const ledgerTable = `${id}-ledger`;
  await clients.dynamodb.send(
    new CreateTableCommand({
      TableName: ledgerTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: SEALED_INDEX.partitionKey, AttributeType: 'S' },
        { AttributeName: SEALED_INDEX.sortKey, AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: SEALED_INDEX.name,
          KeySchema: [
            { AttributeName: SEALED_INDEX.partitionKey, KeyType: 'HASH' },
            { AttributeName: SEALED_INDEX.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  const landingBucket = `${id}-landing`;
  const manifestBucket = `${id}-manifests`;
  await clients.s3.send(new CreateBucketCommand({ Bucket: landingBucket }));
  await clients.s3.send(new CreateBucketCommand({ Bucket: manifestBucket }));
  const ingestDlq = await queue(clients, `${id}-ingest-dlq`, {});
  const ingestQueue = await queue(clients, `${id}-ingest`, {
    VisibilityTimeout: visibility,
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: ingestDlq.arn, maxReceiveCount }),
  });
  const commitDlq = await queue(clients, `${id}-commit-dlq.fifo`, { FifoQueue: 'true' });
  const commitQueue = await queue(clients, `${id}-commit.fifo`, {
    FifoQueue: 'true',
    VisibilityTimeout: visibility,
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: commitDlq.arn, maxReceiveCount }),
  });
  if (options.notifications ?? true) {
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: landingBucket,
        NotificationConfiguration: {
          QueueConfigurations: [{ QueueArn: ingestQueue.arn, Events: ['s3:ObjectCreated:*'] }],
        },
      }),
    );
  }
  const glueDatabase = `${id.replace(/[^a-z0-9]/g, '_')}_bronze`;
  await clients.glue.send(new CreateDatabaseCommand({ DatabaseInput: { Name: glueDatabase } }));
  return {
    ledgerTable,
    landingBucket,
    manifestBucket,
    ingestQueue,
    ingestDlq,
    commitQueue,
    commitDlq,
    glueDatabase,
  };
}

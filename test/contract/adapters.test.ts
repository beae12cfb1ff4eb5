/** The port contracts against the DynamoDB, S3 and SQS adapters on the emulator (the integration project). */
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll } from 'vitest';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { DynamoDbLedger } from '../../shared/ingestion/aws/dynamodb-ledger.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { SqsCommitQueue } from '../../shared/ingestion/aws/sqs-commit-queue.ts';
import { testClients, uniqueName } from '../support/aws.ts';
import { createPipelineResources, type PipelineResources } from '../support/resources.ts';
import { type BronzeTarget, deltaStoreContract, sinkCursorContract } from './bronze-contract.ts';
import { ledgerContract } from './ledger-contract.ts';
import { batchStoreContract, commitQueueContract } from './storage-contract.ts';
import { type ContractTarget, freshTable } from './target.ts';

const clients = testClients();
let resources: PipelineResources;
beforeAll(async () => {
  resources = await createPipelineResources(clients, { notifications: false });
});

/** Tests share the ledger table and the bucket (each uses its own tables); each gets its own FIFO queue. */
async function adapterTarget(): Promise<ContractTarget> {
  const { QueueUrl } = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: `${uniqueName('contract')}.fifo`,
      Attributes: { FifoQueue: 'true', VisibilityTimeout: '30' },
    }),
  );
  if (!QueueUrl) throw new Error('the emulator returned no queue url');
  return {
    ledger: new DynamoDbLedger({ client: clients.dynamodb, tableName: resources.ledgerTable }),
    store: new S3BatchStore({ client: clients.s3, bucket: resources.manifestBucket }),
    commitQueue: new SqsCommitQueue({ client: clients.sqs, queueUrl: QueueUrl }),
    async receiveCommits() {
      const { Messages = [] } = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['MessageGroupId'],
        }),
      );
      for (const m of Messages)
        await clients.sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
      return Messages.map((m) => ({ body: m.Body ?? '', group: m.Attributes?.MessageGroupId }));
    },
  };
}

ledgerContract(adapterTarget);
batchStoreContract(adapterTarget);
commitQueueContract(adapterTarget);

/** Each `delta()` a fresh table root in the manifest bucket; the cursors on the shared ledger table. */
async function bronzeAdapterTarget(): Promise<BronzeTarget> {
  return {
    delta: () => new S3DeltaStore(clients.s3, resources.manifestBucket, `${freshTable()}/_bronze`),
    cursors: new DynamoDbSinkCursorStore({ client: clients.dynamodb, tableName: resources.ledgerTable }),
  };
}

deltaStoreContract(bronzeAdapterTarget);
sinkCursorContract(bronzeAdapterTarget);

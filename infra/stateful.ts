import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SEALED_INDEX } from '../shared/ledger/keys.ts';

export interface StatefulResourcesProps {
  readonly landingBucket?: IBucket;
  readonly manifestBucket?: IBucket;
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
  /** Batcher timeout; the ingest queue's visibility timeout is 6x (AWS's advice for SQS event sources). */
  readonly batcherTimeout: Duration;
  readonly committerTimeout: Duration;
}

/** The pipeline's state: everything here survives a redeploy of the functions. */
export class StatefulResources extends Construct {
  readonly ledger: Table;
  readonly landingBucket: IBucket;
  readonly manifestBucket: IBucket;
  readonly ingestQueue: Queue;
  readonly ingestDlq: Queue;
  readonly commitQueue: Queue;
  readonly commitDlq: Queue;

  constructor(scope: Construct, id: string, props: StatefulResourcesProps) {
    super(scope, id);
    // AWS::DynamoDB::Table rather than GlobalTable: single-region, and the emulator's CloudFormation creates it.
    this.ledger = new Table(this, 'Ledger', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      deletionProtection: props.deletionProtection,
      removalPolicy: props.removalPolicy,
    });
    // Sparse: only SEALED, uncommitted batch items carry the key, never file claims (I4).
    this.ledger.addGlobalSecondaryIndex({
      indexName: SEALED_INDEX.name,
      partitionKey: { name: SEALED_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: SEALED_INDEX.sortKey, type: AttributeType.NUMBER },
    });

    const autoDelete = props.removalPolicy === RemovalPolicy.DESTROY;
    this.landingBucket =
      props.landingBucket ??
      new Bucket(this, 'Landing', {
        encryption: BucketEncryption.S3_MANAGED,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        removalPolicy: props.removalPolicy,
        autoDeleteObjects: autoDelete,
      });
    this.manifestBucket =
      props.manifestBucket ??
      new Bucket(this, 'Manifests', {
        encryption: BucketEncryption.S3_MANAGED,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        versioned: true,
        removalPolicy: props.removalPolicy,
        autoDeleteObjects: autoDelete,
        lifecycleRules: [
          // Staged lists matter until their batch commits (minutes); orphans of aborted batches go too.
          {
            id: 'expire-staging',
            prefix: '_staging/',
            expiration: Duration.days(14),
            noncurrentVersionExpiration: Duration.days(1),
          },
        ],
      });

    const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
    this.ingestDlq = new Queue(this, 'IngestDlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    this.ingestQueue = new Queue(this, 'IngestQueue', {
      ...queueDefaults,
      visibilityTimeout: Duration.seconds(props.batcherTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.ingestDlq, maxReceiveCount: 10 },
    });
    this.commitDlq = new Queue(this, 'CommitDlq', {
      ...queueDefaults,
      fifo: true,
      retentionPeriod: Duration.days(14),
    });
    this.commitQueue = new Queue(this, 'CommitQueue', {
      ...queueDefaults,
      fifo: true,
      // Explicit dedup id = batchId (a re-sent request is dropped for 5 minutes).
      contentBasedDeduplication: false,
      visibilityTimeout: Duration.seconds(props.committerTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.commitDlq, maxReceiveCount: 10 },
    });
  }
}

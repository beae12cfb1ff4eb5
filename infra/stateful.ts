import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SEALED_INDEX } from '../shared/ingestion/ledger-keys.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';

export interface StatefulResourcesProps {
  readonly landingBucket?: IBucket;
  readonly manifestBucket?: IBucket;
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
  /** Version a created landing bucket: a table allows overwrites, so manifests name versionIds. */
  readonly versionLanding: boolean;
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
    // Sparse: only batches with work left (SEALED, or COMMITTED and unpublished) carry the key, never file claims (I4).
    this.ledger.addGlobalSecondaryIndex({
      indexName: SEALED_INDEX.name,
      partitionKey: { name: SEALED_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: SEALED_INDEX.sortKey, type: AttributeType.NUMBER },
    });

    const autoDelete = props.removalPolicy === RemovalPolicy.DESTROY;
    // Parts of an upload never completed are billed but invisible to listings (and to Inlet): drop them.
    const abortIncompleteUploads = {
      id: 'abort-incomplete-multipart-uploads',
      abortIncompleteMultipartUploadAfter: Duration.days(7),
    };
    this.landingBucket =
      props.landingBucket ??
      new Bucket(this, 'Landing', {
        encryption: BucketEncryption.S3_MANAGED,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        // No noncurrent-version expiry: a manifest of an allowOverwrites table names old versions.
        versioned: props.versionLanding || undefined,
        removalPolicy: props.removalPolicy,
        autoDeleteObjects: autoDelete,
        lifecycleRules: [abortIncompleteUploads],
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
          // A current staged list is never expired: its batch may wait days to commit (a blocked table), and
          // a pending version whose list is gone wedges the table. The committer deletes the list once the
          // batch is COMMITTED; that delete leaves a noncurrent version and a delete marker, cleaned up here.
          {
            id: 'staging-cleanup',
            prefix: '_staging/',
            noncurrentVersionExpiration: Duration.days(1),
            expiredObjectDeleteMarker: true,
          },
          abortIncompleteUploads,
        ],
      });

    const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
    this.ingestDlq = new Queue(this, 'IngestDlq', {
      ...queueDefaults,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
    });
    this.ingestQueue = new Queue(this, 'IngestQueue', {
      ...queueDefaults,
      visibilityTimeout: Duration.seconds(
        props.batcherTimeout.toSeconds() * DEFAULTS.queueVisibilityTimeouts,
      ),
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
      deadLetterQueue: { queue: this.ingestDlq, maxReceiveCount: DEFAULTS.maxReceiveCount },
    });
    this.commitDlq = new Queue(this, 'CommitDlq', {
      ...queueDefaults,
      fifo: true,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
    });
    this.commitQueue = new Queue(this, 'CommitQueue', {
      ...queueDefaults,
      fifo: true,
      // Explicit dedup id = batchId (a re-sent request is dropped for 5 minutes).
      contentBasedDeduplication: false,
      visibilityTimeout: Duration.seconds(
        props.committerTimeout.toSeconds() * DEFAULTS.queueVisibilityTimeouts,
      ),
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
      deadLetterQueue: { queue: this.commitDlq, maxReceiveCount: DEFAULTS.maxReceiveCount },
    });
  }
}

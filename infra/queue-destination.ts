import { Aws } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type BucketNotificationDestinationConfig,
  BucketNotificationDestinationType,
  type IBucket,
  type IBucketNotificationDestination,
} from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * CDK's `SqsDestination`, with the queue policy also conditioned on `aws:SourceAccount`: a bucket ARN names
 * no account, so `aws:SourceArn` alone would let a same-named bucket in another account (after this one is
 * deleted and the name reused) send events into the ingest queue. The queue is SQS-managed encrypted, so no
 * key policy is needed.
 */
export class AccountScopedQueueDestination implements IBucketNotificationDestination {
  constructor(private readonly queue: IQueue) {}

  bind(_scope: Construct, bucket: IBucket): BucketNotificationDestinationConfig {
    this.queue.grantSendMessages(
      new ServicePrincipal('s3.amazonaws.com', {
        conditions: {
          ArnLike: { 'aws:SourceArn': bucket.bucketArn },
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        },
      }),
    );
    return {
      arn: this.queue.queueArn,
      type: BucketNotificationDestinationType.QUEUE,
      dependencies: [this.queue],
    };
  }
}

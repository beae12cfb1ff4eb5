// AWS's latencies per operation, for the AWS-latency proxy (./latency-proxy.ts): the bench's AWS-latency pass
// (bench/aws-latency.ts) and `npm start -- --aws-latency`. Each figure is a same-region median as AWS
// publishes it, or, where AWS publishes none, an assumption said to be one, with its reasoning.
// docs/performance.md shows the same table.

export interface LatencyFigure {
  readonly ms: number;
  /** `service:Operation` as IAM names them (local/latency-proxy.ts `awsOperation`). */
  readonly operations: readonly string[];
  /** Where the figure comes from: an AWS page, or "assumption: ..." with the reasoning. */
  readonly source: string;
}

const DYNAMODB =
  'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Introduction.html ("single-digit millisecond performance at any scale"): the middle of that range';
const S3_SMALL =
  'https://docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/timeouts-and-retries-for-latency-sensitive-applications.html ("small requests (for example, less than 512 KB), where median latencies are often in the tens of milliseconds range")';
const SQS =
  'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-throughput-horizontal-scaling-and-batching.html ("if the latency from an Amazon EC2-based client to Amazon SQS in the same region averages 20 ms")';

export const AWS_LATENCIES = {
  dynamodbItem: {
    ms: 5,
    operations: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:Query',
    ],
    source: DYNAMODB,
  },
  dynamodbBatch: {
    ms: 10,
    operations: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:Scan'],
    source: `assumption: twice a single-item call (up to 100 items served by several partitions at once); ${DYNAMODB}`,
  },
  dynamodbTransaction: {
    ms: 15,
    operations: ['dynamodb:TransactWriteItems', 'dynamodb:TransactGetItems'],
    source:
      'assumption: three single-item calls, as a transaction prepares then commits every item through a coordinator (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html, "Capacity management for transactions": two underlying reads or writes of every item)',
  },
  s3Object: {
    ms: 30,
    operations: [
      's3:GetObject',
      's3:HeadObject',
      's3:PutObject',
      's3:CopyObject',
      's3:DeleteObject',
      's3:GetObjectTagging',
      's3:PutObjectTagging',
      // Each part of a multipart write or copy is one such request.
      's3:CreateMultipartUpload',
      's3:UploadPart',
      's3:UploadPartCopy',
      's3:CompleteMultipartUpload',
      's3:AbortMultipartUpload',
    ],
    source: S3_SMALL,
  },
  s3List: {
    ms: 60,
    operations: ['s3:ListObjectsV2', 's3:ListObjectVersions'],
    source: `assumption: twice a small GET (a page returns up to 1,000 keys); ${S3_SMALL}`,
  },
  sqs: {
    ms: 20,
    operations: [
      'sqs:SendMessage',
      'sqs:SendMessageBatch',
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:DeleteMessageBatch',
      'sqs:ChangeMessageVisibility',
      'sqs:ChangeMessageVisibilityBatch',
      'sqs:GetQueueAttributes',
    ],
    source: SQS,
  },
  eventBridge: {
    ms: 20,
    operations: ['events:PutEvents'],
    source: `assumption: one same-region HTTPS round trip, as SQS's; AWS publishes no PutEvents latency (${SQS})`,
  },
  lambdaInvoke: {
    ms: 20,
    operations: ['lambda:Invoke'],
    source:
      'assumption: a warm invocation by an event source mapping or Invoke costs one same-region round trip before the handler runs, as SQS\'s 20 ms; AWS publishes no figure (cold starts are measured apart, in "bundles")',
  },
  stepFunctionsTask: {
    ms: 50,
    operations: ['states:Task'],
    source:
      'assumption: a Standard workflow Task state schedules the Lambda invoke and records its result, two round trips plus the invoke; AWS publishes no state transition latency',
  },
} as const satisfies Record<string, LatencyFigure>;

/** What the proxy and the in-process hops hold each operation for; setup calls (CreateTable, ...) pass. */
export function latencyOf(operation: string): number {
  for (const figure of Object.values(AWS_LATENCIES))
    if ((figure.operations as readonly string[]).includes(operation)) return figure.ms;
  return 0;
}

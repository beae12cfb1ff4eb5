/** Event factories in the exact shapes AWS sends (see test/integration/emulator-fidelity.test.ts). */
import type { SQSRecord } from 'aws-lambda';

export interface ObjectSpec {
  bucket?: string;
  key: string;
  size?: number;
  eTag?: string;
  versionId?: string;
  sequencer?: string;
  eventName?: string;
  eventTime?: string;
}

/** AWS form-URL-encodes notification keys (space -> '+'); it leaves '/' alone. */
export function encodeNotificationKey(key: string): string {
  return key
    .split('/')
    .map((part) => encodeURIComponent(part).replace(/%20/g, '+'))
    .join('/');
}

export function s3Record(spec: ObjectSpec) {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: 'us-east-1',
    eventTime: spec.eventTime ?? '2026-11-29T12:00:00.000Z',
    eventName: spec.eventName ?? 'ObjectCreated:Put',
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'inlet',
      bucket: { name: spec.bucket ?? 'landing', arn: `arn:aws:s3:::${spec.bucket ?? 'landing'}` },
      object: {
        key: encodeNotificationKey(spec.key),
        size: spec.size ?? 100,
        eTag: spec.eTag ?? 'etag-1',
        ...(spec.versionId ? { versionId: spec.versionId } : {}),
        sequencer: spec.sequencer ?? '0055AED6DCD90281E5',
      },
    },
  };
}

export function s3Notification(...specs: ObjectSpec[]): string {
  return JSON.stringify({ Records: specs.map(s3Record) });
}

export function snsWrapped(inner: string): string {
  return JSON.stringify({
    Type: 'Notification',
    MessageId: 'a1b2',
    TopicArn: 'arn:aws:sns:us-east-1:123456789012:landing-events',
    Message: inner,
    Timestamp: '2026-11-29T12:00:00.000Z',
  });
}

export function eventBridgeObjectCreated(spec: ObjectSpec, detailType = 'Object Created'): string {
  return JSON.stringify({
    version: '0',
    id: '17793124-05d4-b198-2fde-7ededc63b103',
    'detail-type': detailType,
    source: 'aws.s3',
    account: '111122223333',
    time: spec.eventTime ?? '2026-11-29T12:00:00Z',
    region: 'us-east-1',
    resources: [`arn:aws:s3:::${spec.bucket ?? 'landing'}`],
    detail: {
      version: '0',
      bucket: { name: spec.bucket ?? 'landing' },
      object: {
        key: spec.key,
        size: spec.size ?? 100,
        etag: spec.eTag ?? 'etag-1',
        ...(spec.versionId ? { 'version-id': spec.versionId } : {}),
        sequencer: spec.sequencer ?? '617f08299329d189',
      },
      'request-id': 'N4N7GDK58NMKJ12R',
      requester: '123456789012',
      'source-ip-address': '1.2.3.4',
      reason: 'PutObject',
    },
  });
}

export const s3TestEvent = JSON.stringify({
  Service: 'Amazon S3',
  Event: 's3:TestEvent',
  Time: '2026-11-29T12:00:00.000Z',
  Bucket: 'landing',
  RequestId: '5582815E1AEA5ADF',
  HostId: '8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE',
});

export const AWKWARD_KEYS = [
  'orders/2026/11/29/a b+c.json',
  'orders/100%/x.json',
  'orders/ünïcødé/日本.json',
  'orders/dt=2026-11-29/hour=12/part-0.json',
  'orders/10:47:07;v=1.json',
  'orders/plus+only.json',
  'orders/space only.json',
  'orders/%2B-literal.json',
] as const;

/** One message of the SQS event Lambda's event source mapping passes a function. */
export function sqsRecord(message: {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** The queue's name, in the record's `eventSourceARN`. */
  readonly queue: string;
  readonly sentAt: number;
  readonly receiveCount?: number;
  readonly group?: string;
  readonly senderId?: string;
}): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount ?? 1),
      SentTimestamp: String(message.sentAt),
      SenderId: message.senderId ?? 'test',
      ApproximateFirstReceiveTimestamp: String(message.sentAt),
      ...(message.group ? { MessageGroupId: message.group } : {}),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${message.queue}`,
    awsRegion: 'us-east-1',
  };
}

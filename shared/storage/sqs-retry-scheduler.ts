import { ChangeMessageVisibilityBatchCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { RetryLater, RetryScheduler } from './batch-store.ts';

/** SQS's ceiling for a visibility timeout: 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

/**
 * `ChangeMessageVisibility` on messages the Lambda event source mapping delivered: a throttled or busy
 * message returns after a backoff of our choosing, so it neither waits out a 30-minute visibility timeout nor
 * runs through its receive count into the DLQ. The queue URL is resolved from the event's ARN once.
 */
export class SqsRetryScheduler implements RetryScheduler {
  private readonly urls = new Map<string, Promise<string>>();

  constructor(private readonly client: SQSClient) {}

  async retryLater(messages: readonly RetryLater[]): Promise<void> {
    const byQueue = new Map<string, RetryLater[]>();
    for (const m of messages) byQueue.set(m.queueArn, [...(byQueue.get(m.queueArn) ?? []), m]);
    for (const [arn, list] of byQueue) {
      const QueueUrl = await this.urlOf(arn);
      for (let i = 0; i < list.length; i += 10) {
        await this.client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl,
            Entries: list.slice(i, i + 10).map((m, j) => ({
              Id: String(j),
              ReceiptHandle: m.receiptHandle,
              VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(m.seconds))),
            })),
          }),
        );
      }
    }
  }

  private urlOf(arn: string): Promise<string> {
    let url = this.urls.get(arn);
    if (!url) {
      const [, , , , account, name] = arn.split(':');
      url = this.client
        .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
        .then((r) => r.QueueUrl ?? '');
      url.catch(() => this.urls.delete(arn));
      this.urls.set(arn, url);
    }
    return url;
  }
}

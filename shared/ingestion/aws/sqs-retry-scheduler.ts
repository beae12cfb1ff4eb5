import { ChangeMessageVisibilityBatchCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { VisibilityRefusedError } from '../../kernel/errors.ts';
import type {
  MessageVisibility,
  RefusedVisibility,
  RetryLater,
  RetryScheduler,
} from '../../kernel/message-visibility.ts';

/** SQS's ceiling for a visibility timeout: 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;
/** ChangeMessageVisibilityBatch takes at most 10 entries a call. */
const BATCH_ENTRIES = 10;

/**
 * `ChangeMessageVisibilityBatch` on messages the Lambda event source mapping delivered, by the receipt
 * handles its event carries: a throttled or busy message returns after a backoff of our choosing, so it
 * neither waits out a 30-minute visibility timeout nor runs through its receive count into the DLQ; the bronze
 * sink's visibility lease extends its messages the same way. The queue URL is resolved from the event's ARN
 * once.
 */
export class SqsRetryScheduler implements RetryScheduler, MessageVisibility {
  private readonly urls = new Map<string, Promise<string>>();

  constructor(private readonly client: SQSClient) {}

  async retryLater(messages: readonly RetryLater[]): Promise<void> {
    const refused = await this.changeVisibility(messages);
    if (refused.length > 0) throw new VisibilityRefusedError(refused);
  }

  /**
   * The call succeeds while entries fail: each answer names its entry by `Id` (here its index in the call),
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibilityBatch.html.
   */
  async changeVisibility(
    messages: readonly RetryLater[],
    signal?: AbortSignal,
  ): Promise<readonly RefusedVisibility[]> {
    const byQueue = new Map<string, RetryLater[]>();
    for (const m of messages) byQueue.set(m.queueArn, [...(byQueue.get(m.queueArn) ?? []), m]);
    const refused: RefusedVisibility[] = [];
    for (const [arn, list] of byQueue) {
      const QueueUrl = await this.urlOf(arn);
      for (let i = 0; i < list.length; i += BATCH_ENTRIES) {
        const chunk = list.slice(i, i + BATCH_ENTRIES);
        const { Failed } = await this.client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl,
            Entries: chunk.map((m, j) => ({
              Id: String(j),
              ReceiptHandle: m.receiptHandle,
              VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(m.seconds))),
            })),
          }),
          signal ? { abortSignal: signal } : {},
        );
        for (const failure of Failed ?? []) {
          const message = chunk[Number(failure.Id)];
          if (message)
            refused.push({
              receiptHandle: message.receiptHandle,
              code: failure.Code ?? 'Unknown',
              senderFault: failure.SenderFault ?? true,
              message: failure.Message ?? '',
            });
        }
      }
    }
    return refused;
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

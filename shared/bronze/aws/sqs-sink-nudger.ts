import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { SinkNudger } from '../ports.ts';

/** The sink's FIFO queue: group = table keeps one sink per table at a time. */
export class SqsSinkNudger implements SinkNudger {
  constructor(private readonly options: { readonly client: SQSClient; readonly queueUrl: string }) {}

  async nudge(table: string, afterDeltaVersion: number, cause: string): Promise<void> {
    try {
      await this.options.client.send(
        new SendMessageCommand({
          QueueUrl: this.options.queueUrl,
          MessageBody: JSON.stringify({ table }),
          MessageGroupId: table,
          // Per run, not per cursor: the SDK's retries of this send are dropped, but a later run that ran out
          // of budget at the same cursor (another table's catch-up used it, or the same message came back)
          // must get its nudge through, or the table waits for its next commit.
          // At most 63 + 1 + 20 + 1 + 36 + 1 + 5 (message id and receive count) = 127 < 128 characters.
          MessageDeduplicationId: `${table}.${afterDeltaVersion}.${cause}`,
        }),
      );
    } catch (error) {
      throw classifyAwsError('nudge sink', error);
    }
  }
}

import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { classifyAwsError } from '../errors.ts';

/** Asks the sink to run again for a table: after a time budget ran out, so the rest is not left waiting. */
export interface SinkNudger {
  nudge(table: string, afterDeltaVersion: number): Promise<void>;
}

/** The sink's FIFO queue: group = table keeps one sink per table at a time. */
export class SqsSinkNudger implements SinkNudger {
  constructor(private readonly options: { readonly client: SQSClient; readonly queueUrl: string }) {}

  async nudge(table: string, afterDeltaVersion: number): Promise<void> {
    try {
      await this.options.client.send(
        new SendMessageCommand({
          QueueUrl: this.options.queueUrl,
          MessageBody: JSON.stringify({ table }),
          MessageGroupId: table,
          MessageDeduplicationId: `${table}-continue-${afterDeltaVersion}`,
        }),
      );
    } catch (error) {
      throw classifyAwsError('nudge sink', error);
    }
  }
}

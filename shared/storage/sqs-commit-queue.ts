import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { classifyAwsError } from '../errors.ts';
import type { CommitQueue } from './batch-store.ts';

export interface CommitRequest {
  readonly table: string;
  readonly batchId: string;
}

export class SqsCommitQueue implements CommitQueue {
  constructor(private readonly options: { readonly client: SQSClient; readonly queueUrl: string }) {}

  async requestCommit(table: string, batchId: string): Promise<void> {
    const body: CommitRequest = { table, batchId };
    try {
      await this.options.client.send(
        new SendMessageCommand({
          QueueUrl: this.options.queueUrl,
          MessageBody: JSON.stringify(body),
          // One group per table: its batches commit one at a time, in request order.
          MessageGroupId: table,
          // A re-sent request within 5 minutes is dropped by SQS; later ones find the batch COMMITTED.
          MessageDeduplicationId: batchId,
        }),
      );
    } catch (error) {
      throw classifyAwsError('request commit', error);
    }
  }
}

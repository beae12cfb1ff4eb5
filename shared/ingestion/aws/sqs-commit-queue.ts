import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { CommitQueue } from '../batch-store.ts';

export interface CommitRequest {
  readonly table: string;
  readonly batchId: string;
}

/** SQS's limit on entries per SendMessageBatch. */
const BATCH_ENTRIES = 10;

export class SqsCommitQueue implements CommitQueue {
  constructor(private readonly options: { readonly client: SQSClient; readonly queueUrl: string }) {}

  async requestCommit(table: string, batchId: string): Promise<void> {
    try {
      await this.options.client.send(
        new SendMessageCommand({ QueueUrl: this.options.queueUrl, ...message(table, batchId) }),
      );
    } catch (error) {
      throw classifyAwsError('request commit', error);
    }
  }

  async requestCommits(table: string, batchIds: readonly string[], resendId: string): Promise<string[]> {
    const rejected: string[] = [];
    for (let i = 0; i < batchIds.length; i += BATCH_ENTRIES) {
      const chunk = batchIds.slice(i, i + BATCH_ENTRIES);
      try {
        const result = await this.options.client.send(
          new SendMessageBatchCommand({
            QueueUrl: this.options.queueUrl,
            // Entry ids only need to be unique within one request.
            Entries: chunk.map((batchId, n) => ({ Id: String(n), ...message(table, batchId, resendId) })),
          }),
        );
        // A batch call succeeds as a whole while single entries fail (throttled, ...): those are reported.
        for (const failed of result.Failed ?? []) {
          const batchId = chunk[Number(failed.Id)];
          if (batchId !== undefined) rejected.push(batchId);
        }
      } catch (error) {
        throw classifyAwsError('request commits', error);
      }
    }
    return rejected;
  }
}

function message(table: string, batchId: string, resendId?: string) {
  const body: CommitRequest = { table, batchId };
  return {
    MessageBody: JSON.stringify(body),
    // One group per table: its batches commit one at a time, in request order.
    MessageGroupId: table,
    // A batcher's re-sent request within 5 minutes is dropped by SQS; later ones find the batch COMMITTED.
    // The sweeper's re-sends are deliberate (the original may have been consumed minutes ago): own id.
    MessageDeduplicationId: resendId ? `${batchId}.${resendId}` : batchId,
  };
}

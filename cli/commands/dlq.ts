import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { CliTarget } from '../target.ts';

async function move(target: CliTarget, from: string, to: string, fifo: boolean): Promise<number> {
  let moved = 0;
  for (;;) {
    const { Messages } = await target.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: from,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
      }),
    );
    if (!Messages || Messages.length === 0) return moved;
    for (const message of Messages) {
      const body = message.Body ?? '';
      // Commit requests keep their group (table) and dedup id (batch) so FIFO order and dedup still hold.
      const request = fifo ? (JSON.parse(body) as { table: string; batchId: string }) : undefined;
      await target.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: to,
          MessageBody: body,
          ...(request
            ? {
                MessageGroupId: request.table,
                MessageDeduplicationId: `${request.batchId}-redrive-${Date.now()}`,
              }
            : {}),
        }),
      );
    }
    // Deleted only after the copies were sent: a crash here re-sends, never drops (the pipeline dedupes).
    await target.clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: from,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    moved += Messages.length;
  }
}

/** Moves dead-lettered messages back to their queues (after the cause is fixed). */
export async function redrive(target: CliTarget, json: boolean): Promise<void> {
  const ingest = await move(target, target.ingestDlqUrl, target.ingestQueueUrl, false);
  const commit = await move(target, target.commitDlqUrl, target.commitQueueUrl, true);
  if (json) console.log(JSON.stringify({ ingest, commit }));
  else console.log(`redrove ${ingest} ingest message(s) and ${commit} commit request(s)`);
}

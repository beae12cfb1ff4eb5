import { tableSummaries } from '../../local/summary.ts';
import { queueDepth } from '../../shared/aws/queues.ts';
import { clientConfig } from '../../shared/aws/target.ts';
import { formatBytes, formatTime } from '../format.ts';
import type { CliTarget } from '../target.ts';

const depth = (target: CliTarget, url: string) => queueDepth(target.clients.sqs, url);

/** SQS reports a queue's oldest message age only as a CloudWatch metric; an emulator has none (null). */
async function oldestMessageAgeSeconds(target: CliTarget): Promise<number | null> {
  if (target.local) return null;
  // Loaded only for a deployed stack: local mode never pays for the CloudWatch client.
  const { CloudWatchClient, GetMetricStatisticsCommand } = await import('@aws-sdk/client-cloudwatch');
  const cloudwatch = new CloudWatchClient(clientConfig(target.aws));
  const queueName = target.ingestQueueUrl.split('/').pop() ?? '';
  const now = Date.now();
  const { Datapoints } = await cloudwatch
    .send(
      new GetMetricStatisticsCommand({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: queueName }],
        StartTime: new Date(now - 10 * 60_000),
        EndTime: new Date(now),
        Period: 60,
        Statistics: ['Maximum'],
      }),
    )
    .finally(() => cloudwatch.destroy());
  const latest = (Datapoints ?? []).sort(
    (a, b) => (b.Timestamp?.getTime() ?? 0) - (a.Timestamp?.getTime() ?? 0),
  )[0];
  return latest?.Maximum ?? null;
}

export async function status(target: CliTarget, json: boolean): Promise<void> {
  const tables = await tableSummaries(target.ledger, target.tables);
  const queues = {
    ingest: await depth(target, target.ingestQueueUrl),
    ingestDlq: await depth(target, target.ingestDlqUrl),
    commit: await depth(target, target.commitQueueUrl),
    commitDlq: await depth(target, target.commitDlqUrl),
    oldestMessageAgeSeconds: await oldestMessageAgeSeconds(target),
  };
  if (json) {
    console.log(JSON.stringify({ target: target.where, tables, queues }, null, 2));
    return;
  }
  console.log(`Inlet, ${target.where}`);
  for (const t of tables) {
    const pending = t.pending ? `, version ${t.pending.version} reserved for ${t.pending.batchId}` : '';
    console.log(
      `  ${t.name}: head v${t.head}, ${t.files} files, ${formatBytes(t.bytes)}, last commit ${t.lastCommitAt ? formatTime(t.lastCommitAt) : 'never'}, ${t.sealedBatches} batch(es) waiting${pending}`,
    );
  }
  const age =
    queues.oldestMessageAgeSeconds === null ? 'n/a (CloudWatch only)' : `${queues.oldestMessageAgeSeconds}s`;
  console.log(
    `  ingest queue: ${queues.ingest.visible} waiting, ${queues.ingest.inFlight} in flight, oldest ${age}; DLQ ${queues.ingestDlq.visible}`,
  );
  console.log(
    `  commit queue: ${queues.commit.visible} waiting, ${queues.commit.inFlight} in flight; DLQ ${queues.commitDlq.visible}`,
  );
}

import { queueDepth } from '../../local/aws/queue-depth.ts';
import { tableSummaries } from '../../local/summary.ts';
import { clientConfig } from '../../shared/kernel/aws/target.ts';
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
  // Independent reads: in parallel, so the answer takes one round trip, not eight.
  const [tables, ingest, ingestDlq, commit, commitDlq, oldestAge] = await Promise.all([
    tableSummaries(target.ledger, target.tables),
    depth(target, target.ingestQueueUrl),
    depth(target, target.ingestDlqUrl),
    depth(target, target.commitQueueUrl),
    depth(target, target.commitDlqUrl),
    oldestMessageAgeSeconds(target),
  ]);
  const queues = { ingest, ingestDlq, commit, commitDlq, oldestMessageAgeSeconds: oldestAge };
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

import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { RetryScheduler } from '../kernel/message-visibility.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import { IngestBatch, type IngestDeps } from './ingest-batch.ts';

export type BatcherHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<SQSBatchResponse>;

export interface BatcherDeps extends IngestDeps {
  readonly metrics: MetricsSink;
  /** Sets failed messages' visibility by why they failed; without it they keep the queue's timeout. */
  readonly retries?: RetryScheduler;
}

/**
 * The batching Lambda: SQS batch in, partial batch response out (ReportBatchItemFailures). Claims are
 * decided across the whole batch, so it reports failures itself rather than per record.
 */
export function makeBatcherHandler(deps: BatcherDeps): BatcherHandler {
  const ingest = new IngestBatch(deps);
  return async (event, context) => {
    const messages = event.Records.map((record) => ({
      messageId: record.messageId,
      body: record.body,
      sentAt: new Date(Number(record.attributes?.SentTimestamp ?? Date.now())).toISOString(),
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    }));
    const deadline = context ? deps.now() + context.getRemainingTimeInMillis() : undefined;
    try {
      const { failedMessageIds, retryAfterSeconds, stats, sealed } = await ingest.handle(
        messages,
        deadline === undefined ? {} : { deadline },
      );
      const m = deps.metrics;
      m.count(METRIC.filesClaimed, stats.claimed);
      m.count(METRIC.duplicates, stats.duplicates);
      m.count(METRIC.takeovers, stats.takeovers);
      m.count(METRIC.busy, stats.busy);
      m.count(METRIC.claimErrors, stats.failedClaims);
      m.count(METRIC.throttled, stats.throttled);
      m.count(METRIC.fenced, stats.fenced);
      m.count(METRIC.quarantined, stats.quarantined);
      m.count(METRIC.ignored, stats.ignored);
      m.count(METRIC.skipped, stats.skipped);
      for (const batch of sealed) m.count(METRIC.batchSize, batch.files);
      deps.log.info('batch processed', {
        messages: messages.length,
        failed: failedMessageIds.length,
        ...stats,
        sealed,
      });
      if (deps.retries && retryAfterSeconds.size > 0) {
        const later = event.Records.filter((r) => retryAfterSeconds.has(r.messageId)).map((r) => ({
          receiptHandle: r.receiptHandle,
          queueArn: r.eventSourceARN,
          seconds: retryAfterSeconds.get(r.messageId) ?? 0,
        }));
        // Best effort: a message whose change failed comes back after the queue's timeout, as before.
        await deps.retries
          .retryLater(later)
          .catch((error) =>
            deps.log.warn('could not set the retry delay of failed messages', { error: String(error) }),
          );
      }
      return { batchItemFailures: failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
    } finally {
      deps.metrics.flush();
    }
  };
}

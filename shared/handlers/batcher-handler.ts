import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { METRIC, type MetricsSink } from '../metrics.ts';
import { IngestBatch, type IngestDeps } from '../usecases/ingest-batch.ts';

export type BatcherHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * The batching Lambda: SQS batch in, partial batch response out (ReportBatchItemFailures). Claims are
 * decided across the whole batch, so it reports failures itself rather than per record.
 */
export function makeBatcherHandler(deps: IngestDeps & { readonly metrics: MetricsSink }): BatcherHandler {
  const ingest = new IngestBatch(deps);
  return async (event) => {
    const messages = event.Records.map((record) => ({
      messageId: record.messageId,
      body: record.body,
      sentAt: new Date(Number(record.attributes?.SentTimestamp ?? Date.now())).toISOString(),
    }));
    try {
      const { failedMessageIds, stats, sealed } = await ingest.handle(messages);
      const m = deps.metrics;
      m.count(METRIC.filesClaimed, stats.claimed);
      m.count(METRIC.duplicates, stats.duplicates);
      m.count(METRIC.takeovers, stats.takeovers);
      m.count(METRIC.busy, stats.busy);
      m.count(METRIC.claimErrors, stats.failedClaims);
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
      return { batchItemFailures: failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
    } finally {
      deps.metrics.flush();
    }
  };
}

import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchNotSealedError, ManifestAheadOfLedgerError, StagedListMissingError } from '../errors.ts';
import { METRIC, type MetricsSink } from '../metrics.ts';
import { CommitBatch, type CommitDeps } from '../usecases/commit-batch.ts';
import * as z from '../zod.ts';

export type CommitterHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

const nonEmpty = z.string().check(z.minLength(1));
const commitRequest = z.object({ table: nonEmpty, batchId: nonEmpty });

/**
 * The commit Lambda on the FIFO queue: records of one table in order. After a failure the rest of that
 * table's records fail too (versions are never assigned out of request order), but only that table's:
 * one wedged table must not hold the others (`skipGroupOnError`, group = table).
 */
export function makeCommitterHandler(deps: CommitDeps & { readonly metrics: MetricsSink }): CommitterHandler {
  const committer = new CommitBatch(deps);
  const m = deps.metrics;

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const parsed = commitRequest.safeParse(JSON.parse(record.body));
    if (!parsed.success) {
      // Only Inlet writes this queue; a bad request is a bug, not data: log it and let it go to the DLQ.
      m.count(METRIC.commitErrors, 1);
      throw new Error(`malformed commit request: ${record.body.slice(0, 200)}`);
    }
    const started = deps.now();
    try {
      const outcome = await committer.commit(parsed.data.table, parsed.data.batchId);
      if (!outcome.published) m.count(METRIC.unpublished, 1);
      if (outcome.result === 'committed') {
        m.count(METRIC.versionsCommitted, 1 + outcome.finishedPending.length);
        m.count(METRIC.filesCommitted, outcome.files);
        m.milliseconds(METRIC.commitLatency, deps.now() - started);
        if (outcome.minEventTime)
          m.milliseconds(METRIC.ingestionLag, deps.now() - Date.parse(outcome.minEventTime));
        deps.log.info('version committed', { ...outcome });
      }
    } catch (error) {
      if (error instanceof BatchNotSealedError) {
        // Retrying cannot help and nothing is lost: an unsealed batch's files are taken over on redelivery.
        m.count(METRIC.commitErrors, 1);
        deps.log.error('commit request for a batch that is not sealed: dropped', {
          ...parsed.data,
          error: error.message,
        });
        return;
      }
      // Both need an operator; failing the message keeps the request (DLQ, alarm) and its table waits.
      if (error instanceof ManifestAheadOfLedgerError) m.count(METRIC.manifestAhead, 1);
      if (error instanceof StagedListMissingError) m.count(METRIC.stagedListMissing, 1);
      m.count(METRIC.commitErrors, 1);
      deps.log.error('commit failed', { ...parsed.data, error: String(error) });
      throw error;
    }
  };

  return async (event) => {
    try {
      const processor = new SqsFifoPartialProcessorAsync();
      return await processPartialResponse(event, handleRecord, processor, {
        throwOnFullBatchFailure: false,
        skipGroupOnError: true,
      });
    } finally {
      m.flush();
    }
  };
}

import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type Backoff, backoffDelay } from '../kernel/backoff.ts';
import { BatchNotSealedError, ManifestAheadOfLedgerError, StagedListMissingError } from '../kernel/errors.ts';
import { failedForLoad, giveBack, groupOf, receivesOf } from '../kernel/fifo-backoff.ts';
import type { RetryScheduler } from '../kernel/message-visibility.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import * as z from '../kernel/zod.ts';
import { CommitBatch, type CommitDeps } from './commit-batch.ts';
import { DEFAULT_GROUP_LIMITS } from './commit-group.ts';
import { type CommitRequest, SettledBatches } from './settled-batches.ts';

export type CommitterHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<SQSBatchResponse>;

export interface CommitterDeps extends CommitDeps {
  readonly metrics: MetricsSink;
  /** Sets the visibility of messages that failed for load; without it they keep the queue's timeout. */
  readonly retries?: RetryScheduler;
}

const nonEmpty = z.string().check(z.minLength(1));
const commitRequest = z.object({ table: nonEmpty, batchId: nonEmpty });

/**
 * A commit that failed for load (throttled, or a read or write whose outcome stayed unknown) comes back
 * after 5 s, 10 s, 20 s ... (jittered), by its receive count: a passing throttle costs seconds, not the
 * queue's visibility timeout.
 */
const LOAD_BACKOFF: Backoff = { base: 5, cap: 900, jitter: 'upper-half' };
/**
 * Receives after which a commit still failing for load is acknowledged and left to the sweeper: the ledger,
 * not the message, holds the work (a SEALED batch or a pending reservation, which the sweeper re-requests
 * with a fresh message), and each receive counts toward the queue's maxReceiveCount (10, DEFAULTS): a throttling
 * episode must not dead-letter a request that nothing is wrong with. About 40-75 s of backoff before it.
 */
export const HANDOVER_AFTER_RECEIVES = 5;

/**
 * Time kept at the end of an invocation, beside the longest commit it has run: no commit starts inside it.
 * Lambda kills an invocation at its timeout and the event source mapping then acknowledges none of its
 * messages, done or not, so each counts a receive toward the DLQ; returning first acknowledges the commits
 * done and gives the rest back at once. A quarter of the time the invocation had, at most 5 s (giving back
 * is one ChangeMessageVisibilityBatch, retried).
 */
const RESERVE = { fraction: 0.25, capMs: 5_000 } as const;

/** A commit request not started because the invocation's time was running out. */
class NotStartedError extends Error {}

/**
 * The commit Lambda on the FIFO queue: records of one table in order. After a failure the rest of that
 * table's records fail too (versions are never assigned out of request order), but only that table's:
 * one wedged table must not hold the others (`skipGroupOnError`, group = table).
 */
export function makeCommitterHandler(deps: CommitterDeps): CommitterHandler {
  const committer = new CommitBatch(deps);
  const m = deps.metrics;

  /**
   * `loadFailed`: message group -> seconds until its failed messages come back. `settled`: requests this
   * invocation can answer without reading (a backlog's requests of batches an earlier group committed).
   */
  const handleRecord = (
    deadline: number | undefined,
    loadFailed: Map<string, number>,
    settled: SettledBatches,
  ) => {
    const reserveMs =
      deadline === undefined ? 0 : Math.min(RESERVE.capMs, (deadline - deps.now()) * RESERVE.fraction);
    let longestMs = 0;
    return async (record: SQSRecord): Promise<void> => {
      // Committed and published, as C1 would find it: nothing to do, whatever time is left.
      const request = requestOf(record);
      if (request && settled.has(request.table, request.batchId)) return;
      if (deadline !== undefined && deadline - deps.now() < reserveMs + longestMs) {
        if (receivesOf(record) >= HANDOVER_AFTER_RECEIVES) {
          // The ledger holds the work (the sweeper re-requests it); the message must not reach the DLQ.
          deps.log.warn('commit not started before the timeout: left to the sweeper', {
            messageId: record.messageId,
          });
          return;
        }
        loadFailed.set(groupOf(record), 0);
        throw new NotStartedError('not started: the invocation is near its timeout');
      }
      const parsed = commitRequest.safeParse(JSON.parse(record.body));
      if (!parsed.success) {
        // Only Inlet writes this queue; a bad request is a bug, not data: log it and let it go to the DLQ.
        m.count(METRIC.commitErrors, 1);
        throw new Error(`malformed commit request: ${record.body.slice(0, 200)}`);
      }
      const started = deps.now();
      try {
        const outcome = await committer.commit(
          parsed.data.table,
          parsed.data.batchId,
          deadline === undefined ? {} : { deadline },
        );
        if (outcome.published) settled.add(outcome.table, outcome.batchIds);
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
        if (failedForLoad(error)) {
          const receives = receivesOf(record);
          if (receives >= HANDOVER_AFTER_RECEIVES) {
            m.count(METRIC.commitErrors, 1);
            deps.log.warn('commit still failing for load: left to the sweeper', {
              ...parsed.data,
              receives,
              error: String(error),
            });
            return;
          }
          loadFailed.set(groupOf(record), backoffDelay(LOAD_BACKOFF, receives - 1, deps.random));
        }
        m.count(METRIC.commitErrors, 1);
        deps.log.error('commit failed', { ...parsed.data, error: String(error) });
        throw error;
      } finally {
        longestMs = Math.max(longestMs, deps.now() - started);
      }
    };
  };

  return async (event, context) => {
    const deadline = context ? deps.now() + context.getRemainingTimeInMillis() : undefined;
    const loadFailed = new Map<string, number>();
    try {
      // Without grouping no request's batch is committed by another's: nothing to read ahead.
      const grouping = (deps.group ?? DEFAULT_GROUP_LIMITS).maxBatches > 1;
      const requests = grouping ? event.Records.flatMap((r) => requestOf(r) ?? []) : [];
      const settled = await SettledBatches.read(deps.ledger, requests, deps.log);
      const processor = new SqsFifoPartialProcessorAsync();
      const handle = handleRecord(deadline, loadFailed, settled);
      const response = await processPartialResponse(event, handle, processor, {
        throwOnFullBatchFailure: false,
        skipGroupOnError: true,
      });
      await giveBack(deps, event, response, loadFailed, 'failed commits');
      return response;
    } finally {
      m.flush();
    }
  };
}

/** A well-formed request's table and batch; undefined for a malformed one (it fails on its own, in order). */
function requestOf(record: SQSRecord): CommitRequest | undefined {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    return undefined;
  }
  const parsed = commitRequest.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

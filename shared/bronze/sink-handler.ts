import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type Backoff, backoffDelay } from '../kernel/backoff.ts';
import { DEFAULTS } from '../kernel/defaults.ts';
import { failedForLoad, giveBack, groupOf, receivesOf } from '../kernel/fifo-backoff.ts';
import type { RetryScheduler } from '../kernel/message-visibility.ts';
import { METRIC, type MetricsSink } from '../kernel/metrics.ts';
import * as z from '../kernel/zod.ts';
import type { SinkNudger } from './ports.ts';
import { type SinkDeps, type SinkOutcome, SinkTable } from './sink.ts';
import { type LeaseSettings, VisibilityLease } from './visibility-lease.ts';

export type SinkHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<SQSBatchResponse>;

/**
 * A `BatchCommitted` event as EventBridge delivers it to SQS, the sink's own `{table}` nudge, or a scheduled
 * nudge (`{table, scheduledAt}`: the extra field only makes each firing a distinct message).
 */
const table = z.string().check(z.minLength(1));
const sinkMessage = z.pipe(
  z.union([z.object({ detail: z.object({ table }) }), z.object({ table })]),
  z.transform((m) => ('detail' in m ? m.detail.table : m.table)),
);

/** No part of a version starts in the last minute of the invocation. */
const SAFETY_MS = DEFAULTS.sink.lastStartSeconds * 1000;
/**
 * A part still running this close to the Lambda timeout is abandoned, leaving time to nudge and answer:
 * a timed-out invocation would fail every table's message in its batch, not only the slow one.
 */
const FINISH_MARGIN_MS = 15_000;
/**
 * A table whose run failed for a reason that passes (a throttle, a 5xx, a lost answer, a commit race) comes
 * back after 5 s, 10 s, 20 s ... by its receive count, up to 15 minutes (one nudge period), instead of the
 * queue's 90-minute visibility timeout; only its own group waits (`skipGroupOnError`).
 */
const RETRY_BACKOFF: Backoff = { base: 5, cap: 900, jitter: 'upper-half' };

export type SinkHandlerDeps = SinkDeps & {
  readonly nudger: SinkNudger;
  readonly metrics: MetricsSink;
  /** Sets the visibility of a failed table's messages; without it they keep the queue's timeout. */
  readonly retries?: RetryScheduler;
  /**
   * A visibility lease with a heartbeat on the invocation's messages (./visibility-lease.ts), so a crashed
   * invocation holds its tables one lease, not the queue's visibility timeout. Without it they keep the
   * queue's timeout while the invocation runs.
   */
  readonly lease?: Omit<LeaseSettings, 'maxSeconds'> & {
    /**
     * The queue's visibility timeout: the longest lease, and what a table stopped for good (a failure that
     * does not pass, a malformed message) waits for its retry, as it did before the lease.
     */
    readonly queueVisibilitySeconds: number;
  };
};

/**
 * The sink Lambda on its FIFO queue (group = table). A message only says "table T has news": the cursor,
 * not the message, decides which versions are written, so duplicates and lost messages are harmless as long
 * as some message for T arrives after each commit. A table whose run fails fails only its own messages:
 * the batch's other tables still run, and a failure that passes comes back after a backoff.
 */
export function makeSinkHandler(deps: SinkHandlerDeps): SinkHandler {
  const sink = new SinkTable(deps);
  const m = deps.metrics;
  const publish = (outcome: SinkOutcome) => {
    m.count(METRIC.sinkVersions, outcome.versions.length);
    m.count(METRIC.sinkRows, outcome.added.rows);
    m.count(METRIC.sinkRescued, outcome.added.rescued);
    m.count(METRIC.sinkDataFiles, outcome.added.dataFiles);
    m.count(METRIC.sinkDataBytes, outcome.added.dataBytes);
    m.count(METRIC.sinkFilesCleaned, outcome.cleanedFiles);
    m.count(METRIC.sinkSourcesMissing, outcome.added.missingSources);
    m.count(METRIC.sinkFilesLeft, outcome.cleanLeft ?? 0);
    m.count(METRIC.sinkCleanErrors, outcome.cleanFailed ? 1 : 0);
    m.count(METRIC.sinkCatalogErrors, outcome.catalogFailed ? 1 : 0);
    m.count(METRIC.sinkManifestErrors, outcome.manifestsFailed ? 1 : 0);
    if (outcome.behind !== undefined) m.count(METRIC.sinkBehind, outcome.behind);
  };
  return async (event, context) => {
    const remaining = context?.getRemainingTimeInMillis() ?? 15 * 60_000;
    const started = deps.now();
    const deadline = started + Math.max(1_000, remaining - SAFETY_MS);
    const finishBy = started + Math.max(1_000, remaining - FINISH_MARGIN_MS);
    const done = new Set<string>();
    /** Message group (table) -> seconds until its failed messages come back. */
    const delays = new Map<string, number>();
    /** A failure that does not pass keeps the queue's timeout, which the lease shortened: it is set back. */
    const stopped = (record: SQSRecord) => {
      if (deps.lease) delays.set(groupOf(record), deps.lease.queueVisibilitySeconds);
    };
    const handleRecord = async (sqsRecord: SQSRecord): Promise<void> => {
      const parsed = sinkMessage.safeParse(jsonOrUndefined(sqsRecord.body));
      if (!parsed.success) {
        // Only EventBridge and the sink write this queue: a bad message is a bug; it goes to the DLQ.
        m.count(METRIC.sinkErrors, 1);
        stopped(sqsRecord);
        throw new Error(`malformed sink message: ${sqsRecord.body.slice(0, 200)}`);
      }
      const table = parsed.data;
      // One catch-up per table per invocation covers every message of that table in the batch.
      if (done.has(table)) return;
      try {
        const outcome = await sink.catchUp(table, deadline, finishBy);
        done.add(table);
        publish(outcome);
        // A part that could not finish in the time left: counted, and logged as an error by the use case.
        if (outcome.outOfTime) m.count(METRIC.sinkErrors, 1);
        if (!outcome.caughtUp) {
          // SinkVersionsBehind carries no table dimension (docs/bronze.md "Metrics"): this line is where the
          // falling-behind alarm's runbook finds which tables are behind.
          deps.log.warn('bronze sink behind', {
            table,
            versionsBehind: outcome.behind,
            deltaVersion: outcome.cursor.deltaVersion,
          });
          // Named by the message and its receive count: a redelivery of the same message (its run failed, or
          // overlapped another) that stops at the same cursor must get its own nudge through too.
          await deps.nudger.nudge(
            table,
            outcome.cursor.deltaVersion,
            `${sqsRecord.messageId}.${receivesOf(sqsRecord)}`,
          );
        }
      } catch (error) {
        m.count(METRIC.sinkErrors, 1);
        const retry = failedForLoad(error);
        if (retry)
          delays.set(groupOf(sqsRecord), backoffDelay(RETRY_BACKOFF, receivesOf(sqsRecord) - 1, deps.random));
        else stopped(sqsRecord);
        deps.log.error('bronze sink failed', { table, error: String(error), retry });
        throw error;
      }
    };
    const processor = new SqsFifoPartialProcessorAsync();
    // Held from the start: the queue's long timeout covers only the time before the invocation began.
    const lease =
      deps.lease &&
      new VisibilityLease(event.Records, {
        ...deps.lease,
        maxSeconds: deps.lease.queueVisibilitySeconds,
        log: deps.log,
      });
    try {
      let response: SQSBatchResponse;
      try {
        response = await processPartialResponse(event, handleRecord, processor, {
          throwOnFullBatchFailure: false,
          // One table's failure (failOnNewColumns, a broken table, a 5xx) must not hold the other tables.
          skipGroupOnError: true,
        });
      } finally {
        // Before the backoff, so no beat overwrites it; the succeeded messages keep the last beat's visibility
        // (two thirds of a lease at least) until Lambda deletes them.
        await lease?.end();
      }
      await giveBack(deps, event, response, delays, 'failed sink runs');
      return response;
    } finally {
      m.flush();
    }
  };
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { SinkNudger } from '../bronze/sink-queue.ts';
import { METRIC, type MetricsSink } from '../metrics.ts';
import { type SinkDeps, type SinkOutcome, SinkTable } from '../usecases/sink.ts';
import * as z from '../zod.ts';

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

/** Time kept back from the Lambda timeout to finish a version's commit and advance the cursor. */
const SAFETY_MS = 60_000;

/**
 * The sink Lambda on its FIFO queue (group = table). A message only says "table T has news": the cursor,
 * not the message, decides which versions are written, so duplicates and lost messages are harmless as long
 * as some message for T arrives after each commit.
 */
export function makeSinkHandler(
  deps: SinkDeps & { readonly nudger: SinkNudger; readonly metrics: MetricsSink },
): SinkHandler {
  const sink = new SinkTable(deps);
  const m = deps.metrics;
  const publish = (outcome: SinkOutcome) => {
    m.count(METRIC.sinkVersions, outcome.written.length);
    m.count(METRIC.sinkRows, outcome.added.rows);
    m.count(METRIC.sinkRescued, outcome.added.rescued);
    m.count(METRIC.sinkDataFiles, outcome.added.dataFiles);
    m.count(METRIC.sinkDataBytes, outcome.added.dataBytes);
    m.count(METRIC.sinkFilesCleaned, outcome.cleanedFiles);
    m.count(METRIC.sinkSourcesMissing, outcome.added.missingSources);
    m.count(METRIC.sinkFilesLeft, outcome.cleanLeft ?? 0);
    m.count(METRIC.sinkCleanErrors, outcome.cleanFailed ? 1 : 0);
    if (outcome.behind !== undefined) m.count(METRIC.sinkBehind, outcome.behind);
  };
  return async (event, context) => {
    const deadline =
      deps.now() + Math.max(1_000, (context?.getRemainingTimeInMillis() ?? 15 * 60_000) - SAFETY_MS);
    const done = new Set<string>();
    const handleRecord = async (sqsRecord: SQSRecord): Promise<void> => {
      const parsed = sinkMessage.safeParse(jsonOrUndefined(sqsRecord.body));
      if (!parsed.success) {
        // Only EventBridge and the sink write this queue: a bad message is a bug; it goes to the DLQ.
        m.count(METRIC.sinkErrors, 1);
        throw new Error(`malformed sink message: ${sqsRecord.body.slice(0, 200)}`);
      }
      const table = parsed.data;
      // One catch-up per table per invocation covers every message of that table in the batch.
      if (done.has(table)) return;
      try {
        const outcome = await sink.catchUp(table, deadline);
        done.add(table);
        publish(outcome);
        if (!outcome.caughtUp) {
          // SinkVersionsBehind carries no table dimension (docs/bronze.md "Metrics"): this line is where the
          // falling-behind alarm's runbook finds which tables are behind.
          deps.log.warn('bronze sink behind', {
            table,
            versionsBehind: outcome.behind,
            deltaVersion: outcome.cursor.deltaVersion,
          });
          await deps.nudger.nudge(table, outcome.cursor.deltaVersion, sqsRecord.messageId);
        }
      } catch (error) {
        m.count(METRIC.sinkErrors, 1);
        deps.log.error('bronze sink failed', { table, error: String(error) });
        throw error;
      }
    };
    const processor = new SqsFifoPartialProcessorAsync();
    try {
      return await processPartialResponse(event, handleRecord, processor, { throwOnFullBatchFailure: false });
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

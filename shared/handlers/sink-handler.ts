import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { SinkNudger } from '../bronze/sink-queue.ts';
import { type SinkDeps, SinkTable } from '../usecases/sink.ts';
import * as z from '../zod.ts';

export type SinkHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<SQSBatchResponse>;

/** A `BatchCommitted` event as EventBridge delivers it to SQS, or the sink's own `{table}` nudge. */
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
export function makeSinkHandler(deps: SinkDeps & { readonly nudger: SinkNudger }): SinkHandler {
  const sink = new SinkTable(deps);
  return async (event, context) => {
    const deadline =
      deps.now() + Math.max(1_000, (context?.getRemainingTimeInMillis() ?? 15 * 60_000) - SAFETY_MS);
    const done = new Set<string>();
    const handleRecord = async (record: SQSRecord): Promise<void> => {
      const parsed = sinkMessage.safeParse(JSON.parse(record.body));
      if (!parsed.success) {
        // Only EventBridge and the sink write this queue: a bad message is a bug; it goes to the DLQ.
        throw new Error(`malformed sink message: ${record.body.slice(0, 200)}`);
      }
      const table = parsed.data;
      // One catch-up per table per invocation covers every message of that table in the batch.
      if (done.has(table)) return;
      try {
        const outcome = await sink.catchUp(table, deadline);
        done.add(table);
        if (!outcome.caughtUp) await deps.nudger.nudge(table, outcome.cursor.deltaVersion, record.messageId);
      } catch (error) {
        deps.log.error('bronze sink failed', { table, error: String(error) });
        throw error;
      }
    };
    const processor = new SqsFifoPartialProcessorAsync();
    return processPartialResponse(event, handleRecord, processor, { throwOnFullBatchFailure: false });
  };
}

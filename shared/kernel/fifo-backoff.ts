import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DefiniteFailureError, InletError, isThrottle, UnknownOutcomeError } from './errors.ts';
import type { Log } from './log.ts';
import type { RetryScheduler } from './message-visibility.ts';

/**
 * Backoff for the FIFO consumers (committer, bronze sink): a message group whose work failed for a reason
 * that passes comes back after seconds, not the queue's visibility timeout, while the other groups of the
 * batch go on (`skipGroupOnError`).
 */

export const groupOf = (record: SQSRecord) => record.attributes?.MessageGroupId ?? '';
export const receivesOf = (record: SQSRecord) => Number(record.attributes?.ApproximateReceiveCount ?? 1) || 1;

/**
 * Failed for load or contention, which passes: a throttle, an answer lost (5xx, timeout), a head or manifest
 * that kept moving. Not a refusal (a 4xx such as AccessDenied), which an operator must fix: that one keeps the
 * queue's timeout and reaches the DLQ and its alarm.
 */
export function failedForLoad(error: unknown): boolean {
  if (isThrottle(error) || error instanceof UnknownOutcomeError) return true;
  return error instanceof InletError && error.retryable && !(error instanceof DefiniteFailureError);
}

/**
 * The failed messages of each group in `delays`, and the ones of its group skipped after them, get the
 * group's delay: a FIFO group stays blocked while any of its messages is in flight, so one left at the
 * queue's timeout would hold the group as long. Failures for other reasons keep the queue's timeout (and
 * reach the DLQ for an operator). Best effort: a message whose change failed comes back after the timeout.
 */
export async function giveBack(
  deps: { readonly retries?: RetryScheduler; readonly log: Log },
  event: SQSEvent,
  response: SQSBatchResponse,
  delays: ReadonlyMap<string, number>,
  what: string,
): Promise<void> {
  if (!deps.retries || delays.size === 0) return;
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const later = event.Records.filter((r) => failed.has(r.messageId) && delays.has(groupOf(r))).map((r) => ({
    receiptHandle: r.receiptHandle,
    queueArn: r.eventSourceARN,
    seconds: delays.get(groupOf(r)) ?? 0,
  }));
  await deps.retries
    .retryLater(later)
    .catch((error) => deps.log.warn(`could not set the retry delay of ${what}`, { error: String(error) }));
}

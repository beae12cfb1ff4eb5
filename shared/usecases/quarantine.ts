import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';

const MAX_BODY_CHARS = 300_000;

/**
 * Records bad input with its reason, where `inlet quarantine` lists it. Returns false when the ledger write
 * failed: the message then fails and SQS retries it (then the DLQ): bad input is never silently dropped.
 */
export async function quarantineRecords(
  ledger: Ledger,
  log: Log,
  message: { readonly messageId: string; readonly body: string; readonly sentAt: string },
  malformed: ReadonlyArray<{ readonly index: number; readonly reason: string; readonly record: unknown }>,
): Promise<boolean> {
  try {
    for (const bad of malformed) {
      const body = bad.index < 0 ? message.body : JSON.stringify(bad.record);
      const id = bad.index < 0 ? message.messageId : `${message.messageId}#${bad.index}`;
      await ledger.quarantine({
        id,
        reason: bad.reason,
        sentAt: message.sentAt,
        source: 'ingest-queue',
        body: body.length > MAX_BODY_CHARS ? `${body.slice(0, MAX_BODY_CHARS)}…[truncated]` : body,
      });
      log.warn('event quarantined', { id, reason: bad.reason });
    }
    return true;
  } catch (error) {
    log.error('quarantine write failed; the message will be retried', {
      messageId: message.messageId,
      error: String(error),
    });
    return false;
  }
}

import type { Log } from '../kernel/log.ts';
import type { Ledger } from './ledger.ts';

/**
 * The most of a body a quarantine item keeps, in UTF-8 bytes: a DynamoDB item is at most 400 KB, attribute
 * names and values together, and DynamoDB measures strings in UTF-8 bytes; the rest of the item (id,
 * reason, keys) stays far below the remaining 100 KB. A cap in characters would let a body of 3-byte
 * characters reach 900 KB and the write fail, and the message retry until the DLQ.
 */
export const MAX_BODY_BYTES = 300_000;

/** A body cut to at most `maxBytes` of UTF-8, at a character boundary, with its original length. */
export function capBody(
  body: string,
  maxBytes = MAX_BODY_BYTES,
): { body: string; truncated: boolean; originalBytes: number } {
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length <= maxBytes) return { body, truncated: false, originalBytes: bytes.length };
  // Back off over continuation bytes (10xxxxxx), so the cut falls before the first byte of a character.
  let end = maxBytes;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { body: bytes.subarray(0, end).toString('utf8'), truncated: true, originalBytes: bytes.length };
}

/**
 * Records bad input with its reason, where `inlet quarantine` lists it. Returns false when the ledger write
 * failed: the message then fails and SQS retries it (then the DLQ): bad input is never silently dropped.
 */
export async function quarantineRecords(
  ledger: Ledger,
  log: Log,
  message: { readonly messageId: string; readonly body: string; readonly sentAt: string },
  malformed: ReadonlyArray<{
    /** The record's position in the message; -1 for the whole body. */
    readonly index: number;
    readonly reason: string;
    readonly record: unknown;
    /** Names the entry instead of the index (stable across redeliveries), for records that parsed but cannot route. */
    readonly name?: string;
  }>,
): Promise<boolean> {
  try {
    for (const bad of malformed) {
      const whole = bad.index < 0 ? message.body : JSON.stringify(bad.record);
      const id =
        bad.name !== undefined
          ? `${message.messageId}#${bad.name}`
          : bad.index < 0
            ? message.messageId
            : `${message.messageId}#${bad.index}`;
      const { body, truncated, originalBytes } = capBody(whole);
      await ledger.quarantine({
        id,
        reason: bad.reason,
        sentAt: message.sentAt,
        source: 'ingest-queue',
        body,
        ...(truncated ? { bodyTruncated: true, bodyBytes: originalBytes } : {}),
      });
      log.warn('event quarantined', {
        id,
        reason: bad.reason,
        ...(truncated ? { bodyBytes: originalBytes } : {}),
      });
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

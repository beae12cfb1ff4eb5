import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import {
  QUARANTINE_SHARDS,
  quarantineKey,
  quarantinePartitions,
} from '../../../shared/ingestion/ledger-keys.ts';
import type { QuarantineEntry } from '../../../shared/ingestion/model.ts';
import { capBody, MAX_BODY_BYTES, quarantineRecords } from '../../../shared/ingestion/quarantine.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** The ledger port with only the quarantine write: what the use case stored. */
function recordingLedger(): { ledger: Ledger; stored: QuarantineEntry[] } {
  const stored: QuarantineEntry[] = [];
  const ledger = {
    quarantine: async (entry: QuarantineEntry) => void stored.push(entry),
  } as unknown as Ledger;
  return { ledger, stored };
}

describe('quarantined bodies are capped in UTF-8 bytes (DynamoDB items are at most 400 KB)', () => {
  it('stores a 500,000-byte multibyte body under the byte cap, says it was cut and how long it was', async () => {
    const body = `${'€'.repeat(166_666)}ab`; // 3-byte characters: 500,000 bytes, 166,668 characters
    expect(utf8(body)).toBe(500_000);
    const { ledger, stored } = recordingLedger();
    const ok = await quarantineRecords(
      ledger,
      silent,
      { messageId: 'm-1', body, sentAt: '2026-11-30T10:00:00.000Z' },
      [{ index: -1, reason: 'message body is not JSON', record: body }],
    );
    expect(ok).toBe(true);
    const [entry] = stored;
    expect(utf8(entry?.body ?? '')).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(entry).toMatchObject({
      reason: 'message body is not JSON',
      bodyTruncated: true,
      bodyBytes: 500_000,
    });
    expect(body.startsWith(entry?.body ?? 'x')).toBe(true);
  });

  it('never cuts a multibyte character in half', () => {
    for (const char of ['é', '€', '😀']) {
      for (let max = 1; max <= 12; max++) {
        const cut = capBody(char.repeat(10), max);
        expect(utf8(cut.body)).toBeLessThanOrEqual(max);
        // Whole characters only: the cut is a prefix made of complete characters, no U+FFFD.
        expect(char.repeat(10).startsWith(cut.body)).toBe(true);
        expect([...cut.body].every((c) => c === char)).toBe(true);
        expect(cut).toMatchObject({ truncated: true, originalBytes: utf8(char) * 10 });
      }
    }
  });

  it('keeps a body under the cap as it is, not marked as cut', () => {
    expect(capBody('{"a":"ü"}', 100)).toEqual({ body: '{"a":"ü"}', truncated: false, originalBytes: 10 });
  });
});

describe('quarantine partition key', () => {
  it("spreads one day's entries over shards, the same id always to the same one, all listed", () => {
    const pks = new Set(Array.from({ length: 500 }, (_, i) => quarantineKey('2026-11-30', `msg-${i}`).pk));
    expect(pks.size).toBe(QUARANTINE_SHARDS);
    expect(QUARANTINE_SHARDS).toBeGreaterThan(1);
    expect(quarantineKey('2026-11-30', 'msg-7')).toEqual(quarantineKey('2026-11-30', 'msg-7'));
    const listed = quarantinePartitions('2026-11-30');
    for (const pk of pks) expect(listed).toContain(pk);
  });
});

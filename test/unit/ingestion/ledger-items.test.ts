// A ledger item read back is checked before the protocol trusts it: one decoder per item kind, used by the
// DynamoDB adapter and the simulation's fake alike.
import { describe, expect, it } from 'vitest';
import {
  decodeBatch,
  decodeFileEntry,
  decodeQuarantine,
  decodeTable,
} from '../../../shared/ingestion/ledger-items.ts';
import { batchKey, fileKey, tableKey } from '../../../shared/ingestion/ledger-keys.ts';
import { InvalidLedgerItemError } from '../../../shared/kernel/errors.ts';

const sealed = { ...batchKey('orders', 'B1'), table: 'orders', batchId: 'B1', state: 'SEALED', sealedAt: 5 };

describe('ledger items', () => {
  it('a batch item decodes to its record, without the key and index attributes', () => {
    expect(decodeBatch({ ...sealed, sealedTable: 'orders', fileCount: 2 })).toEqual({
      table: 'orders',
      batchId: 'B1',
      state: 'SEALED',
      sealedAt: 5,
      fileCount: 2,
    });
  });

  it('an item that is not what Inlet writes names the item and every problem, and may be retried', () => {
    const error = (() => {
      try {
        decodeBatch({ ...sealed, state: 'DONE', fileCount: '2' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidLedgerItemError);
    const message = (error as Error).message;
    expect(message).toContain('BATCH#orders#B1');
    expect(message).toMatch(/state: /);
    expect(message).toMatch(/fileCount: /);
    expect((error as InvalidLedgerItemError).retryable).toBe(true);
  });

  it('an absent table item is a table nothing was committed to; a head that is not a count is refused', () => {
    expect(decodeTable('orders', undefined)).toEqual({
      table: 'orders',
      head: 0,
      pending: undefined,
      files: 0,
      bytes: 0,
      lastCommitAt: undefined,
      lastBatchId: undefined,
    });
    expect(() => decodeTable('orders', { ...tableKey('orders'), head: -1 })).toThrow(InvalidLedgerItemError);
  });

  it('a file claim decodes with its table and identity; an item of another kind is no file', () => {
    const key = fileKey('orders', 'landing#in/a.json#v1');
    const entry = decodeFileEntry({ ...key, batchId: 'B1', leaseUntil: 9 });
    expect(entry).toMatchObject({ table: 'orders', batchId: 'B1', leaseUntil: 9 });
    expect(decodeFileEntry({ ...tableKey('orders'), head: 1 })).toBeUndefined();
    expect(() => decodeFileEntry({ ...key, batchId: 'B1' })).toThrow(/leaseUntil/);
  });

  it('a quarantine entry keeps bodyBytes only with a cut body, as it was written', () => {
    const entry = { id: 'm1', reason: 'bad', sentAt: '2026-12-02T00:00:00Z', source: 'sqs', body: '{' };
    expect(decodeQuarantine({ pk: 'Q', sk: 'm1', ...entry })).toEqual(entry);
    expect(decodeQuarantine({ ...entry, bodyTruncated: true, bodyBytes: 300_000 })).toEqual({
      ...entry,
      bodyTruncated: true,
      bodyBytes: 300_000,
    });
  });
});

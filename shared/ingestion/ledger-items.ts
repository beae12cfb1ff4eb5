// The ledger's items as schemas: what a DynamoDB read returns is checked here, once, before the protocol
// trusts it (a `state` that is not a batch state, a `head` that is not a number). The adapter and the
// simulation's fake ledger decode through the same functions, so the fake cannot drift from the adapter.
// Key and index attributes (`pk`, `sk`, `sealedTable`) are not part of a record: the schemas drop them.
import { InvalidLedgerItemError } from '../kernel/errors.ts';
import * as z from '../kernel/zod.ts';
import type { FileEntry } from './ledger.ts';
import { parseFilePk } from './ledger-keys.ts';
import {
  BATCH_STATE,
  type BatchRecord,
  type FileOwner,
  type QuarantineEntry,
  type TableRecord,
} from './model.ts';

/** An item as DynamoDB's document client returns it. */
export type LedgerItem = Readonly<Record<string, unknown>>;

const count = z.number().check(z.int(), z.nonnegative());

const batchItem = z.object({
  table: z.string(),
  batchId: z.string(),
  state: z.enum([BATCH_STATE.sealed, BATCH_STATE.committed, BATCH_STATE.aborted]),
  fileCount: z.optional(count),
  bytes: z.optional(count),
  stagedKey: z.optional(z.string()),
  sealedAt: z.optional(z.number()),
  version: z.optional(count),
  committedAt: z.optional(z.string()),
  publishedAt: z.optional(z.string()),
  minEventTime: z.optional(z.string()),
});

const ownerItem = z.object({ batchId: z.string(), leaseUntil: z.number() });

const tableItem = z.object({
  head: z._default(count, 0),
  pending: z.optional(
    z.object({
      version: count,
      batchId: z.string(),
      reservedAt: z.string(),
      batchIds: z.optional(z.array(z.string())),
      stagedKeys: z.optional(z.array(z.string())),
    }),
  ),
  files: z._default(count, 0),
  bytes: z._default(count, 0),
  lastCommitAt: z.optional(z.string()),
  lastBatchId: z.optional(z.string()),
});

const quarantineItem = z.object({
  id: z.string(),
  reason: z.string(),
  sentAt: z.string(),
  source: z.string(),
  body: z.string(),
  bodyTruncated: z.optional(z.boolean()),
  bodyBytes: z.optional(count),
});

function decode<T>(schema: z.ZodMiniType<T>, what: string, item: LedgerItem): T {
  const parsed = schema.safeParse(item);
  if (!parsed.success) throw new InvalidLedgerItemError(what, keyOf(item), z.issueLines(parsed.error));
  return parsed.data;
}

const keyOf = (item: LedgerItem) => `${String(item.pk)} / ${String(item.sk)}`;

/** A BATCH item as its record. */
export const decodeBatch = (item: LedgerItem): BatchRecord => decode(batchItem, 'batch', item);

/** Who holds a FILE item's claim (a claim's or a move's ALL_OLD answer). */
export const decodeOwner = (item: LedgerItem): FileOwner => decode(ownerItem, 'file claim', item);

/** A FILE item with its table and identity, or undefined for an item that is not a file claim. */
export function decodeFileEntry(item: LedgerItem): FileEntry | undefined {
  const parsed = typeof item.pk === 'string' ? parseFilePk(item.pk) : undefined;
  return parsed && { ...parsed, ...decodeOwner(item) };
}

/** A TABLE item (absent: a table nothing was committed to yet); every field named, `pending` when none. */
export function decodeTable(table: string, item: LedgerItem | undefined): TableRecord {
  const { head, pending, files, bytes, lastCommitAt, lastBatchId } = decode(tableItem, 'table', item ?? {});
  return { table, head, pending, files, bytes, lastCommitAt, lastBatchId };
}

/** A quarantine item as its entry; `bodyBytes` only with a cut body, as it was written. */
export function decodeQuarantine(item: LedgerItem): QuarantineEntry {
  const { bodyTruncated, bodyBytes, ...entry } = decode(quarantineItem, 'quarantine entry', item);
  return bodyTruncated && bodyBytes !== undefined ? { ...entry, bodyTruncated, bodyBytes } : entry;
}

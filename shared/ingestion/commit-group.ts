import { DEFAULTS } from '../kernel/defaults.ts';
import { MAX_BATCHES_PER_VERSION } from './ledger.ts';
import { BATCH_STATE, type BatchRecord } from './model.ts';

/**
 * How much one manifest version may cover (group commit, docs/protocol.md C2). A version is one commit
 * transaction and one manifest: batches are capped by DynamoDB's 100 items per transaction, files and bytes
 * by what a reader of one manifest (and the committer's memory, which holds every staged list) should take.
 */
export interface GroupLimits {
  /** 1 turns grouping off. @default 99, the most a commit transaction can hold (TABLE + 99 batches). */
  readonly maxBatches: number;
  /** ~400 bytes of manifest per file: 20,000 files is a manifest of ~8 MB. @default 20000 */
  readonly maxFiles: number;
  /** @default 10 GiB */
  readonly maxBytes: number;
}

export const DEFAULT_GROUP_LIMITS: GroupLimits = {
  maxBatches: MAX_BATCHES_PER_VERSION,
  maxFiles: DEFAULTS.commitGroup.maxFiles,
  maxBytes: DEFAULTS.commitGroup.maxBytes,
};

/**
 * The batches one version commits: the requested batch first (so every request makes progress, however
 * big its batch), then other SEALED batches of the table in the order they sealed, while the version stays
 * within the limits. Stops at the first that does not fit, so batches are committed in seal order.
 */
export function selectGroup(
  requested: BatchRecord,
  waiting: readonly BatchRecord[],
  limits: GroupLimits,
): BatchRecord[] {
  const group = [requested];
  let files = requested.fileCount ?? 0;
  let bytes = requested.bytes ?? 0;
  for (const batch of waiting) {
    if (group.length >= Math.min(limits.maxBatches, MAX_BATCHES_PER_VERSION)) break;
    if (batch.batchId === requested.batchId || batch.state !== BATCH_STATE.sealed || !batch.stagedKey)
      continue;
    const nextFiles = files + (batch.fileCount ?? 0);
    const nextBytes = bytes + (batch.bytes ?? 0);
    if (nextFiles > limits.maxFiles || nextBytes > limits.maxBytes) break;
    group.push(batch);
    files = nextFiles;
    bytes = nextBytes;
  }
  return group;
}

/** `fn` over `items`, at most `limit` at a time, results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i] as T);
  });
  await Promise.all(workers);
  return results;
}

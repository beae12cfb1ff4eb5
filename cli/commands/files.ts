import { BATCH_STATE } from '../../shared/ingestion/model.ts';
import { parseIdentity } from '../../shared/ingestion/routing.ts';
import { output } from '../format.ts';
import type { CliTarget } from '../target.ts';

function describe(state: string | undefined, leaseUntil: number, version?: number): string {
  if (state === BATCH_STATE.committed) return `committed in v${version}`;
  if (state === BATCH_STATE.sealed) return 'sealed, commit pending';
  if (state === BATCH_STATE.aborted) return 'claim of an aborted batch, will be taken over on redelivery';
  return leaseUntil > Date.now() ? 'being claimed' : 'stalled claim, will be taken over on redelivery';
}

/** Where each file under a key or prefix is: claimed, sealed, committed (with the version), or unknown. */
export async function files(
  target: CliTarget,
  keyOrPrefix: string,
  options: { table?: string; json: boolean; limit: number },
): Promise<void> {
  const entries = await target.ledger.scanFiles({
    table: options.table,
    keyPrefix: keyOrPrefix,
    limit: options.limit,
  });
  const batches = new Map<string, Awaited<ReturnType<typeof target.ledger.getBatch>>>();
  const rows = [];
  for (const entry of entries) {
    const cacheKey = `${entry.table}#${entry.batchId}`;
    if (!batches.has(cacheKey))
      batches.set(cacheKey, await target.ledger.getBatch(entry.table, entry.batchId));
    const batch = batches.get(cacheKey);
    const { bucket, key, tag } = parseIdentity(entry.identity);
    rows.push({
      table: entry.table,
      key,
      bucket,
      ...(tag !== '-' ? { version: tag } : {}),
      state: describe(batch?.state, entry.leaseUntil, batch?.version),
      batch: entry.batchId,
      manifestVersion: batch?.state === BATCH_STATE.committed ? (batch.version ?? null) : null,
    });
  }
  output(rows, {
    json: options.json,
    empty: `no file under '${keyOrPrefix}' has been seen by the ledger (check \`inlet quarantine\` and the DLQ)`,
  });
}

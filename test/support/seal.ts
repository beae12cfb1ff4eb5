import type { BatchStore } from '../../shared/ingestion/batch-store.ts';
import type { Ledger } from '../../shared/ingestion/ledger.ts';
import { canonicalFiles } from '../../shared/ingestion/manifest.ts';
import type { FileRef } from '../../shared/ingestion/model.ts';

/**
 * Seals batches as the batcher leaves them (B2-B4: claims, staged list, SEALED item) without going through
 * SQS, so a test or the bench can build a backlog of sealed batches for one table quickly. Batch ids are
 * ULID-shaped and increase with `index`, like the batcher's.
 */
export async function sealBatchDirectly(
  ports: { readonly ledger: Ledger; readonly store: BatchStore },
  options: {
    readonly table: string;
    readonly bucket: string;
    readonly index: number;
    readonly files: number;
    readonly prefix?: string;
    readonly runId?: string;
  },
): Promise<string> {
  const { table, bucket, index } = options;
  const batchId = `01GROUP${(options.runId ?? 'R').padEnd(6, '0').slice(0, 6)}${String(index).padStart(13, '0')}`;
  const eventTime = new Date().toISOString();
  const files: FileRef[] = Array.from({ length: options.files }, (_, i) => {
    const key = `${options.prefix ?? `${table}/`}b${index}/f${i}.json`;
    return {
      table,
      identity: `${bucket}#-#${key}`,
      bucket,
      key,
      size: 100 + i,
      eTag: `e${index}-${i}`,
      versionId: null,
      sequencer: null,
      eventTime,
    };
  });
  await Promise.all(files.map((f) => ports.ledger.claimFile(f, batchId, Date.now() + 600_000)));
  const stagedKey = await ports.store.putStagedList({ table, batchId, files: canonicalFiles(files) });
  const sealed = await ports.ledger.sealBatch({
    table,
    batchId,
    fileCount: files.length,
    bytes: files.reduce((n, f) => n + f.size, 0),
    stagedKey,
    sealedAt: Date.now(),
    minEventTime: eventTime,
  });
  if (sealed.kind !== 'sealed') throw new Error(`batch ${batchId} did not seal: ${sealed.state}`);
  return batchId;
}

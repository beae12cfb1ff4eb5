import type { Ledger } from '../shared/ledger/ledger.ts';
import type { BatchStore } from '../shared/storage/batch-store.ts';

export interface TableSummary {
  readonly name: string;
  readonly head: number;
  readonly files: number;
  readonly bytes: number;
  readonly lastCommitAt: string | null;
  readonly pending: { version: number; batchId: string } | null;
  readonly sealedBatches: number;
}

/** Per-table state from the ledger (what `inlet status` and the local summary print). */
export async function tableSummaries(
  ledger: Ledger,
  tables: readonly { name: string }[],
): Promise<TableSummary[]> {
  return Promise.all(
    tables.map(async ({ name }) => {
      const head = await ledger.getTable(name);
      const sealed = await ledger.listSealedBatches(name, Number.MAX_SAFE_INTEGER);
      return {
        name,
        head: head.head,
        files: head.files,
        bytes: head.bytes,
        lastCommitAt: head.lastCommitAt ?? null,
        pending: head.pending ? { version: head.pending.version, batchId: head.pending.batchId } : null,
        sealedBatches: sealed.length,
      };
    }),
  );
}

/** Files in manifests, counted from the manifests themselves (not from counters). */
export async function committedFiles(
  store: BatchStore,
  tables: readonly { name: string }[],
): Promise<{ files: number; versions: number }> {
  let files = 0;
  let versions = 0;
  for (const { name } of tables) {
    for (const version of await store.listManifestVersions(name)) {
      versions += 1;
      files += (await store.getManifest(name, version))?.fileCount ?? 0;
    }
  }
  return { files, versions };
}

/** The days whose quarantine partitions to read: the last `n` (UTC). */
export function recentDays(n: number, now = Date.now()): string[] {
  return Array.from({ length: n }, (_, i) => new Date(now - i * 86_400_000).toISOString().slice(0, 10));
}

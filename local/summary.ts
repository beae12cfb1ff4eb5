import { catalogTableName } from '../shared/bronze/catalog.ts';
import { bronzeLocation } from '../shared/bronze/config.ts';
import type { SinkCursorStore } from '../shared/bronze/ports.ts';
import type { PipelineConfig } from '../shared/config/pipeline-config.ts';
import type { BatchStore } from '../shared/ingestion/batch-store.ts';
import type { Ledger } from '../shared/ingestion/ledger.ts';

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

/**
 * Files and versions committed, summed over the tables' ledger heads (TABLE items): what the manifests hold,
 * whichever invocation committed them. The committer's metrics cannot give this: an invocation that
 * finishes another batch's pending version first counts that version but only its own batch's files.
 */
export async function committedTotals(
  ledger: Ledger,
  tables: readonly { name: string }[],
): Promise<{ files: number; versions: number }> {
  const heads = await Promise.all(tables.map(({ name }) => ledger.getTable(name)));
  return {
    files: heads.reduce((sum, h) => sum + h.files, 0),
    versions: heads.reduce((sum, h) => sum + h.head, 0),
  };
}

/** Queue depths the live line shows. */
export interface LineDepths {
  readonly ingest: number;
  readonly ingestDlq: number;
  readonly commitDlq: number;
}

/** Committed so far, from the ledger heads, and at the start of this run. */
export interface CommittedSoFar {
  readonly now: { readonly files: number; readonly versions: number };
  readonly baseline: { readonly files: number; readonly versions: number };
}

/**
 * The local pipeline's one-line progress (`npm start`): arrivals from the batcher's metric totals,
 * committed files and versions from the ledger heads (this run's share).
 */
export function liveLine(
  totals: ReadonlyMap<string, number>,
  depths: LineDepths,
  committed: CommittedSoFar,
): string {
  const total = (name: string) => totals.get(name) ?? 0;
  const files = committed.now.files - committed.baseline.files;
  const versions = committed.now.versions - committed.baseline.versions;
  return (
    `arrived ${total('FilesClaimed') + total('DuplicatesDropped') + total('FilesSkipped')} | claimed ${total('FilesClaimed')} | ` +
    `duplicates ${total('DuplicatesDropped')} | committed ${files} | versions ${versions} | ` +
    `quarantined ${total('EventsQuarantined')} | queued ${depths.ingest} | DLQ ${depths.ingestDlq + depths.commitDlq}`
  );
}

/**
 * The bronze fields of the local-mode contract (docs/emulator.md, "What local mode writes") for the tables
 * that have a Delta sink: `{table: {version, rows, rescued}}`, version as Delta readers report it: the Delta
 * version of the sink's last commit, which is the table's version while the sink is its only writer (manifest
 * version - 1 when every version is one commit; a version too big for one invocation is written as several).
 */
export async function bronzeSummary(
  cursors: SinkCursorStore,
  tables: readonly string[],
): Promise<Record<string, { version: number; rows: number; rescued: number }>> {
  const out: Record<string, { version: number; rows: number; rescued: number }> = {};
  for (const table of tables) {
    const cursor = await cursors.get(table);
    out[table] = { version: cursor.deltaVersion, rows: cursor.rows, rescued: cursor.rescued };
  }
  return out;
}

/**
 * `.inlet/local.json` table entries, with `bronzeLocation` and `bronzeFormat` for tables that have a sink,
 * and `catalog` (`{database, table}`) for those the sink registers in the stack's Glue database.
 */
export function withBronzeFields(
  tables: readonly { name: string; prefix: string }[],
  config: PipelineConfig,
  manifestBucket: string,
  /** The stack's Glue database (local/state.ts, glueDatabaseOf); without it no entry has `catalog`. */
  glueDatabase?: string,
): Array<{
  name: string;
  prefix: string;
  bronzeLocation?: string;
  bronzeFormat?: string;
  catalog?: { database: string; table: string };
}> {
  return tables.map((t) => {
    const bronze = config.tables.find((c) => c.name === t.name)?.bronze;
    if (!bronze) return t;
    const { bucket, prefix } = bronzeLocation(t.name, bronze, manifestBucket);
    return {
      ...t,
      bronzeLocation: `s3://${bucket}/${prefix}`,
      bronzeFormat: bronze.format,
      ...(bronze.catalog && glueDatabase
        ? { catalog: { database: glueDatabase, table: catalogTableName(t.name) } }
        : {}),
    };
  });
}

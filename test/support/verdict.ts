import type { PipelineConfig } from '../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../shared/ingestion/ledger.ts';
import type { Manifest } from '../../shared/ingestion/manifest.ts';

export interface ExpectedFile {
  readonly table: string;
  readonly key: string;
  /** For allowOverwrites tables: the version (versionId, else eTag) that makes it a distinct file. */
  readonly version?: string;
}

/** What `verify` returns when I1-I3 hold: nothing lost, duplicated or unexpected; versions 1..N; heads agree. */
export const CLEAN_VERDICT = {
  lost: [],
  duplicated: [],
  unexpected: [],
  contiguous: true,
  headsMatch: true,
} as const;

export interface Verdict {
  readonly lost: string[];
  readonly duplicated: string[];
  readonly unexpected: string[];
  readonly versions: Record<string, number[]>;
  readonly contiguous: boolean;
  readonly headsMatch: boolean;
  readonly dlqDepth: number;
}

/**
 * I1 (exactly once), I2 (nothing lost) and I3 (contiguous versions, heads agree), read through the ports,
 * so the emulator harness and the in-memory one judge a run the same way.
 */
export async function verifyPipeline(source: {
  readonly config: PipelineConfig;
  readonly ledger: Ledger;
  readonly manifests: (table: string) => Promise<Manifest[]>;
  readonly expected: readonly ExpectedFile[];
  readonly dlqDepth: () => Promise<number>;
}): Promise<Verdict> {
  const id = (table: string, key: string, version?: string) =>
    version ? `${table}|${key}|${version}` : `${table}|${key}`;
  const seen = new Map<string, number>();
  const versions: Record<string, number[]> = {};
  let contiguous = true;
  let headsMatch = true;
  for (const table of source.config.tables) {
    const manifests = await source.manifests(table.name);
    versions[table.name] = manifests.map((m) => m.version);
    if (!manifests.every((m, i) => m.version === i + 1 && m.table === table.name)) contiguous = false;
    const head = await source.ledger.getTable(table.name);
    if (head.head !== manifests.length || head.pending) headsMatch = false;
    for (const manifest of manifests) {
      for (const file of manifest.files) {
        const key = id(
          table.name,
          file.key,
          table.allowOverwrites ? (file.versionId ?? file.eTag ?? '') : undefined,
        );
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
  }
  const wanted = new Set(source.expected.map((f) => id(f.table, f.key, f.version)));
  return {
    lost: [...wanted].filter((k) => !seen.has(k)),
    duplicated: [...seen].filter(([, n]) => n > 1).map(([k]) => k),
    unexpected: [...seen.keys()].filter((k) => !wanted.has(k)),
    versions,
    contiguous,
    headsMatch,
    dlqDepth: await source.dlqDepth(),
  };
}

import { manifestKey } from '../../shared/ingestion/manifest.ts';
import { formatBytes, formatTime, output } from '../format.ts';
import { type CliTarget, requireTable } from '../target.ts';

export async function manifests(
  target: CliTarget,
  options: { table?: string; since?: number; json: boolean },
): Promise<void> {
  const tables = options.table ? [requireTable(target, options.table)] : target.tables;
  const rows = [];
  for (const { name } of tables) {
    for (const version of await target.store.listManifestVersions(name)) {
      if (options.since !== undefined && version < options.since) continue;
      const manifest = await target.store.getManifest(name, version);
      rows.push({
        table: name,
        version,
        committedAt: manifest?.committedAt ?? null,
        files: manifest?.fileCount ?? null,
        bytes: manifest?.bytes ?? null,
        batchIds: manifest?.batchIds.join(',') ?? null,
        key: manifestKey(name, version),
      });
    }
  }
  output(rows, {
    json: options.json,
    empty: 'no manifest versions yet',
    human: (r) => ({
      ...r,
      committedAt: formatTime(r.committedAt),
      bytes: r.bytes === null ? null : formatBytes(r.bytes),
    }),
  });
}

import { tailVersions } from '../../shared/ingestion/manifest-tail.ts';
import { type CliTarget, requireTable } from '../target.ts';

/**
 * `inlet tail --table T [--from V]`: committed versions of T in order, one JSON line each, from V until the
 * newest. A consumer keeps the last version it finished and passes the next one as `--from`: each version is
 * then read once (the same cursor the bronze sink keeps, `tailVersions`).
 */
export async function tail(target: CliTarget, options: { table: string; from: number }): Promise<void> {
  const { name } = requireTable(target, options.table);
  for await (const manifest of tailVersions(target.store, name, options.from)) {
    console.log(
      JSON.stringify({
        table: name,
        version: manifest.version,
        committedAt: manifest.committedAt,
        files: manifest.files.map((f) => `s3://${f.bucket}/${f.key}`),
      }),
    );
  }
}

import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3MaintenanceRecords } from '../../shared/bronze/aws/s3-maintenance-record.ts';
import { tableQueries } from '../../shared/bronze/catalog.ts';
import { typeText } from '../../shared/bronze/delta-types.ts';
import type { MaintenanceRecord } from '../../shared/bronze/maintenance-record.ts';
import { readBronzeTable } from '../../shared/bronze/table-state.ts';
import { parseS3Prefix } from '../../shared/kernel/s3-url.ts';
import { CliError } from '../errors.ts';
import { formatBytes, formatTime } from '../format.ts';
import { type CliTarget, requireTable } from '../target.ts';

/**
 * `inlet table <name>`: the bronze Delta table's version, schema, row and rescued-row counts, live files and
 * bytes, read from its `_delta_log/`, and what its scheduled maintenance last did (its record, one GET). The
 * location comes from the stack's outputs (`--stack`) or `.inlet/local.json` in local mode, or `--location`.
 */
export async function table(
  target: CliTarget,
  name: string,
  options: { location?: string; json: boolean },
): Promise<void> {
  const entry = requireTable(target, name) as {
    name: string;
    bronzeLocation?: string;
    catalog?: { database: string; table: string };
  };
  const location = options.location ?? entry.bronzeLocation;
  if (!location)
    throw new CliError(
      `table '${name}' has no bronze location here: it has no bronze sink, or pass --location s3://bucket/prefix`,
    );
  let at: { bucket: string; prefix: string };
  try {
    at = parseS3Prefix(location);
  } catch {
    throw new CliError(`--location must be s3://bucket/prefix, not '${location}'`);
  }
  const delta = new S3DeltaStore(target.clients.s3, at.bucket, at.prefix);
  const [state, maintenance] = await Promise.all([
    readBronzeTable(name, delta),
    new S3MaintenanceRecords(target.clients.s3, at.bucket, at.prefix).get(),
  ]);
  const result = {
    table: name,
    location,
    deltaVersion: state.version,
    // The manifest version wholly in the table (its Delta version says nothing of it: parts, other writers).
    manifestVersion: state.position.manifestVersion,
    // Files of the next manifest version already in, while it is written in parts (0 otherwise).
    nextVersionFilesDone: state.position.filesDone,
    rows: state.rows,
    rescuedRows: state.rescued,
    dataFiles: state.files,
    dataBytes: state.bytes,
    checkpointVersion: state.checkpointVersion ?? null,
    // What the scheduled optimize and vacuum last did (null: no run yet, or maintenance is off).
    maintenance: maintenance ?? null,
    // `long`, `decimal(10,2)`, `struct<a:long,b:array<date>>`: one line per column, nested types included.
    schema: state.columns.map((c) => ({ name: c.name, type: typeText(c.type) })),
    // Where the sink registers it in the Glue Data Catalog (null: not catalogued), and how to query it.
    catalog: entry.catalog ?? null,
    query: tableQueries(location, entry.catalog),
  };
  if (options.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  if (state.version < 0) {
    console.log(`${name}: no Delta version yet at ${location}`);
    return;
  }
  console.log(`${name}  ${location}`);
  console.log(
    `Delta version ${state.version}  rows ${state.rows}  rescued ${state.rescued}  data files ${state.files} (${formatBytes(state.bytes)})`,
  );
  const { manifestVersion, filesDone } = state.position;
  console.log(
    filesDone > 0
      ? `  holds manifest versions 1-${manifestVersion} and ${filesDone} files of version ${manifestVersion + 1} (written in parts)`
      : manifestVersion > 0
        ? `  holds manifest versions 1-${manifestVersion}`
        : '  holds no manifest version yet',
  );
  console.log(
    state.checkpointVersion === undefined
      ? `  read from ${state.commitsRead} commits (no checkpoint yet)`
      : `  read from checkpoint ${state.checkpointVersion} and ${state.commitsRead} later commits`,
  );
  for (const line of maintenanceLines(maintenance)) console.log(line);
  for (const column of result.schema) console.log(`  ${column.name.padEnd(24)} ${column.type}`);
  const { query } = result;
  console.log(
    query.athena ? `Athena    ${query.athena}` : 'Athena    not in the Glue catalog (bronze.catalog: false)',
  );
  console.log(`Spark SQL ${query.sparkSql}`);
  console.log(`delta-rs  ${query.deltaRs}`);
}

/** What a person reads of the maintenance record. */
export function maintenanceLines(record: MaintenanceRecord | undefined, now = Date.now()): string[] {
  if (!record) return ['Maintenance  no run yet (scheduled by bronze.maintenance, daily by default)'];
  const { optimize, vacuum } = record;
  return [
    `Maintenance  last run ${formatTime(record.ranAt, now)}`,
    optimize
      ? `  optimize   version ${optimize.version}, ${formatTime(optimize.at, now)}: ${optimize.filesRemoved} files (${formatBytes(optimize.bytesRemoved)}) rewritten as ${optimize.filesAdded} (${formatBytes(optimize.bytesAdded)})`
      : '  optimize   nothing to compact yet',
    vacuum
      ? `  vacuum     ${formatTime(vacuum.at, now)}: ${vacuum.filesDeleted} files deleted (${formatBytes(vacuum.bytesDeleted)}), retention ${vacuum.retentionHours} h`
      : '  vacuum     not run yet',
  ];
}

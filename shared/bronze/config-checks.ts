/**
 * What one table's bronze settings can do to the other tables' files, checked across the configuration
 * (docs/bronze.md, "cleanSource" and "Where the Delta table lives"). Every problem is returned at once, as
 * `field: message` lines.
 *
 * Bucket names matter here and are not always known: a created landing bucket's name is a CloudFormation
 * token at synth and absent from the functions' configuration. A table without `bucket` reads the landing
 * bucket (its events come from it); when its name is not given, the landing bucket is taken to be none of
 * the names in the configuration (a name no one could write before the stack created it). So the functions
 * at start-up never refuse what synth accepted.
 */

import type { TableConfig } from '../config/pipeline-config.ts';
import { type KeyPattern, mayShareKeys, routedKeys } from '../ingestion/table-overlap.ts';
import { parseS3Prefix } from '../kernel/s3-url.ts';
import { archivePrefix } from './archive-key.ts';
import { catalogProblems } from './catalog.ts';
import { bronzeLocation, type CleanSourceConfig } from './config.ts';

export interface KnownBuckets {
  /** The landing bucket's name, when known (an imported bucket); tables without `bucket` read it. */
  readonly landingBucket?: string;
  readonly manifestBucket?: string;
}

/** Auto Loader: `cleanSource.retentionDuration` "must be greater than 7 days for DELETE" (clean-source page). */
export const MIN_DELETE_RETENTION_DAYS = 8;

/** The key endings of everything the sink writes under a Delta table's root. */
const DELTA_KEY_ENDINGS = ['.json', '.parquet', '_last_checkpoint'];

export function bronzeProblems(tables: readonly TableConfig[], known: KnownBuckets = {}): string[] {
  const problems: string[] = [];
  for (const table of tables) {
    const clean = table.bronze?.cleanSource;
    if (clean) problems.push(...cleanSourceProblems(table, clean, tables, known));
  }
  problems.push(...locationProblems(tables, known));
  problems.push(...catalogProblems(tables));
  return problems;
}

function cleanSourceProblems(
  table: TableConfig,
  clean: CleanSourceConfig,
  tables: readonly TableConfig[],
  known: KnownBuckets,
): string[] {
  const at = `${table.name}.bronze.cleanSource`;
  const problems: string[] = [];
  if (clean.action === 'delete' && clean.retentionDays < MIN_DELETE_RETENTION_DAYS)
    problems.push(
      `${at}.retentionDays: must be more than 7 days for action 'delete' (as Auto Loader's cleanSource.retentionDuration): a deleted file cannot be brought back, so an operator needs time to notice; 'move' takes any retention`,
    );
  // Every table that routes a file must hold it before it is removed: the sink checks that for live
  // bronze tables (their claim, their Delta table); no one can for anything else.
  for (const other of tables) {
    const landing = known.landingBucket;
    if (other === table || !mayShareKeys(routedKeys(table, landing), routedKeys(other, landing))) continue;
    if (!other.bronze)
      problems.push(
        `${at}: table '${other.name}' routes the same keys and has no bronze table: its manifests would name files cleanSource removed, and nothing says when its consumers are done with them. Give it a prefix of its own, or a bronze table (each file is then removed only once that table's Delta table holds it)`,
      );
    else if (!other.live)
      problems.push(
        `${at}: table '${other.name}' (live: false, a reprocess target) reads the same keys by backfill, and files cleanSource removed are not there to backfill. Reprocess from the archive instead (a table over the moveTo location), or turn cleanSource off for the reprocess`,
      );
  }
  if (clean.action === 'move' && clean.moveTo) {
    const to = parseS3Prefix(clean.moveTo);
    const source = table.bucket ?? known.landingBucket;
    // <moveTo prefix>/<source bucket>/..., ending with the original key: the part known here.
    const moved: KeyPattern = {
      bucket: to.bucket,
      prefix: source ? archivePrefix(to.prefix, source) : to.prefix === '' ? '' : `${to.prefix}/`,
      suffix: table.suffix,
    };
    for (const other of tables) {
      // A table fed only by backfills (live: false) is sent no event for a moved file.
      if (other.live && mayShareKeys(moved, routedKeys(other, known.landingBucket)))
        problems.push(
          `${at}.moveTo: ${clean.moveTo} puts files under s3://${to.bucket}/${moved.prefix}, where table '${other.name}' reads landing files: the moved files would be ingested again; move them where no table reads`,
        );
    }
  }
  return problems;
}

/** The `s3://bucket/prefix/` root of each bronze table whose root is known here. */
function roots(tables: readonly TableConfig[], known: KnownBuckets) {
  return tables.flatMap((t) => {
    if (!t.bronze) return [];
    if (!t.bronze.location && !known.manifestBucket) return [];
    const { bucket, prefix } = bronzeLocation(t.name, t.bronze, known.manifestBucket ?? '');
    return [{ table: t, bucket, root: prefix === '' ? '' : `${prefix}/`, explicit: !!t.bronze.location }];
  });
}

function locationProblems(tables: readonly TableConfig[], known: KnownBuckets): string[] {
  const problems: string[] = [];
  const all = roots(tables, known);
  all.forEach((a, i) => {
    if (!a.explicit) return;
    const at = `${a.table.name}.bronze.location`;
    for (const b of all.slice(0, i).concat(all.slice(i + 1).filter((x) => !x.explicit))) {
      if (a.bucket === b.bucket && (a.root.startsWith(b.root) || b.root.startsWith(a.root)))
        problems.push(
          `${at}: s3://${a.bucket}/${a.root} overlaps table '${b.table.name}'s Delta table at s3://${b.bucket}/${b.root}: two sinks would write one log`,
        );
    }
    for (const t of tables) {
      const delta: KeyPattern = { bucket: a.bucket, prefix: a.root };
      if (!mayShareKeys(delta, { ...routedKeys(t, known.landingBucket), suffix: undefined })) continue;
      if (
        t.suffix &&
        !DELTA_KEY_ENDINGS.some(
          (end) => end.endsWith(t.suffix as string) || (t.suffix as string).endsWith(end),
        )
      )
        continue;
      problems.push(
        `${at}: s3://${a.bucket}/${a.root} is where table '${t.name}' reads landing files: the sink's Parquet and log files would be ingested as new files, in a loop; put the Delta table outside every table's prefix`,
      );
    }
  });
  return problems;
}

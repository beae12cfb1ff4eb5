// How big the backfill's state can get in Step Functions, which refuses a state's input or output, and a
// task's input, over 262,144 bytes of UTF-8 (States.DataLimitExceeded: the execution fails and every
// partition's cursor with it), and keeps an execution's failure cause to 32,768 characters
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html ,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ExecutionFailedEventDetails.html).
import { coalesce, isInventoryPartition, type Partition } from './partitions.ts';

export const STATE_LIMIT_BYTES = 262_144;
export const CAUSE_LIMIT_CHARS = 32_768;
/** S3 keys are at most 1,024 bytes of UTF-8 (https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html). */
const MAX_KEY_BYTES = 1024;
/**
 * Version IDs "are Unicode, UTF-8 encoded, URL-ready, opaque strings that are no more than 1,024 bytes long"
 * (S3's wording, quoted in https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/mwaa/aws.sdk.kotlin.services.mwaa.model/-environment/requirements-s3-object-version.html).
 */
const MAX_VERSION_ID_BYTES = 1024;
/** A partition's result besides the partition: `{"partition":…,"totals":{five counters},"done":false}`. */
const RESULT_BYTES = 192;
/**
 * A failed partition's `failure` as the Map's Catch records it: Lambda's error JSON (type, message, one
 * line of trace) as a string. The handler cuts a step's error message to MAX_STEP_ERROR_CHARS and its stack
 * to one line; this allows for every character being 3 bytes of UTF-8 or escaped twice.
 */
export const MAX_STEP_ERROR_CHARS = 400;
const FAILURE_BYTES = 8 * MAX_STEP_ERROR_CHARS + 128;
/** Room for what is not counted exactly (names, the execution number, rounding). */
const MARGIN_BYTES = 8 * 1024;

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** A partition's JSON with its cursor at its longest: the size it can reach during a round. */
export function partitionMaxBytes(partition: Partition, versions: boolean): number {
  if (isInventoryPartition(partition))
    return bytes({ ...partition, file: partition.fileEnd ?? 0, row: 99_999_999_999 });
  const { startAfter: _s, versionIdMarker: _v, ...fixed } = partition;
  return (
    bytes({
      ...fixed,
      startAfter: 'k'.repeat(MAX_KEY_BYTES),
      ...(versions ? { versionIdMarker: 'v'.repeat(MAX_VERSION_ID_BYTES) } : {}),
    }) +
    // A key of printable characters; a quote or backslash in it is escaped (rare in keys; AWS lists them
    // among the characters to avoid).
    64
  );
}

/**
 * The largest state of a round, bounded ahead: Merge's input (the Map's output) holds the round's state,
 * whose partitions appear twice (`pending` and the summary's resume point), and each partition's result
 * with its cursor at its longest and a failure. Merge's own outputs hold fewer copies, plus a failure cause
 * of at most CAUSE_LIMIT_CHARS, which the budget leaves room for.
 */
export function roundMaxBytes(
  stateBytes: number,
  partitions: readonly Partition[],
  versions: boolean,
): number {
  return partitions.reduce(
    (sum, p) => sum + 3 * partitionMaxBytes(p, versions) + RESULT_BYTES + FAILURE_BYTES,
    stateBytes,
  );
}

export const ROUND_BUDGET_BYTES = STATE_LIMIT_BYTES - CAUSE_LIMIT_CHARS - MARGIN_BYTES;

/**
 * The most partitions that fit a round: when they all do not, runs of partitions that follow each other become
 * one (coalesce), as evenly as the count allows. Partitions come in key (or file) order, so each run is
 * adjacent.
 */
export function fitPartitions(
  partitions: readonly Partition[],
  fits: (partitions: readonly Partition[]) => boolean,
): Partition[] {
  if (partitions.length <= 1 || fits(partitions)) return [...partitions];
  let best = group(partitions, 1);
  let low = 2;
  let high = partitions.length - 1;
  while (low <= high) {
    const count = Math.floor((low + high) / 2);
    const grouped = group(partitions, count);
    if (fits(grouped)) {
      best = grouped;
      low = count + 1;
    } else high = count - 1;
  }
  return best;
}

function group(partitions: readonly Partition[], count: number): Partition[] {
  return Array.from({ length: count }, (_, i) => {
    const run = partitions.slice(
      Math.floor((i * partitions.length) / count),
      Math.floor(((i + 1) * partitions.length) / count),
    );
    return run.slice(1).reduce(coalesce, run[0] as Partition);
  });
}

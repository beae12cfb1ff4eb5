/**
 * Whether two sets of S3 keys, each given as a table routes them (shared/ingestion/routing.ts: bucket, prefix, suffix,
 * glob), can share a key. Conservative: "may overlap" unless provably disjoint, so a check built on it
 * refuses too much rather than too little. Used where a key reaching two places loses or duplicates data:
 * cleanSource with another table over the same files, an archive or a Delta table under a landing prefix.
 */
export interface KeyPattern {
  /** Undefined: any bucket. */
  readonly bucket?: string;
  readonly prefix: string;
  readonly suffix?: string;
  readonly glob?: string;
}

/**
 * Stands for the landing bucket when its name is not known (a created bucket at synth, or the functions'
 * configuration, which does not carry it): not a valid bucket name, so it equals no name a table gives.
 */
export const LANDING_BUCKET = '<landing bucket>';

/**
 * The keys a table routes, as a pattern: its own `bucket`, else the landing bucket (events come from the
 * landing bucket: its notifications, or the EventBridge rule on its name), with its prefix, suffix and glob.
 */
export function routedKeys(
  table: {
    readonly bucket?: string;
    readonly prefix: string;
    readonly suffix?: string;
    readonly glob?: string;
  },
  landingBucket: string = LANDING_BUCKET,
): KeyPattern {
  return {
    bucket: table.bucket ?? landingBucket,
    prefix: table.prefix,
    suffix: table.suffix,
    glob: table.glob,
  };
}

/** The literal start of a picomatch glob, before its first special character. */
export function globLiteralPrefix(glob: string): string {
  const special = glob.search(/[*?[\]{}()!+@\\]/);
  return special < 0 ? glob : glob.slice(0, special);
}

const prefixesOverlap = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

export function mayShareKeys(a: KeyPattern, b: KeyPattern): boolean {
  if (a.bucket !== undefined && b.bucket !== undefined && a.bucket !== b.bucket) return false;
  // A key of both starts with both prefixes (and with both globs' literal starts).
  const starts = [a.prefix, b.prefix, ...[a.glob, b.glob].flatMap((g) => (g ? [globLiteralPrefix(g)] : []))];
  if (starts.some((x) => starts.some((y) => !prefixesOverlap(x, y)))) return false;
  if (a.suffix && b.suffix && !a.suffix.endsWith(b.suffix) && !b.suffix.endsWith(a.suffix)) return false;
  return true;
}

import type { BronzeType } from './delta-types.ts';
import { dateText } from './values.ts';

/**
 * Partition values and the Hive-style directories data files are written under (docs/bronze.md,
 * "Partitions"). The log is the truth of a file's partition values (PROTOCOL.md "Data Files": "Actual
 * partition values for a file must be read from the transaction log"); the `col=value/` directories follow
 * the reference implementation's convention so a Hive-style lister (Athena without the log, a Glue crawler)
 * finds the same values.
 */

/** Hive's and Spark's directory name for a null partition value (`ExternalCatalogUtils.DEFAULT_PARTITION_NAME`). */
export const HIVE_DEFAULT_PARTITION = '__HIVE_DEFAULT_PARTITION__';

/**
 * Spark's `ExternalCatalogUtils.escapePathName` (not on Windows): U+0001..U+001F, U+007F and each of
 * the characters in ESCAPED's string below (slash, equals sign and percent among them) as `%XX`, upper-case
 * hex; everything else, non-ASCII included, as it is.
 */
const ESCAPED = new Set([
  ...Array.from({ length: 0x1f }, (_, i) => String.fromCharCode(i + 1)),
  ...'"#%\'*/:=?\\\u007f{[]^',
]);

export function escapePathName(text: string): string {
  let out = '';
  for (const c of text)
    out += ESCAPED.has(c) ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : c;
  return out;
}

/**
 * A partition value as PROTOCOL.md "Partition Value Serialization" writes it: strings as they are, numbers
 * as their digits, booleans `true`/`false`, dates `YYYY-MM-DD`; null for a null, and for an empty string
 * ("An empty string for any type translates to a null partition value": the fitter rescues an empty
 * string of a partition column, so none reaches here). A string with a lone surrogate is made well formed
 * (U+FFFD), as the Parquet writer stores it in a data column.
 */
export function partitionValueText(cell: unknown, type: BronzeType): string | null {
  if (cell === null || cell === undefined) return null;
  let text: string;
  if (type === 'date') text = dateText(cell as number);
  else if (typeof cell === 'string') text = (cell as unknown as WellFormed).toWellFormed();
  else text = String(cell);
  return text === '' ? null : text;
}

/** ES2024's String.prototype.toWellFormed (Node 20 has it; the project's lib is older). */
interface WellFormed {
  toWellFormed(): string;
}

const MS_PER_DAY = 86_400_000;

/** The ingestion date of a manifest version: the UTC day of its commit time, as a day count. */
export const ingestDate = (committedAt: string): number => Math.floor(Date.parse(committedAt) / MS_PER_DAY);

/** `col=value/...` for the partition values in order (`''` unpartitioned), each part escaped as Spark does. */
export function partitionDirectory(values: ReadonlyArray<readonly [string, string | null]>): string {
  return values
    .map(([column, value]) => `${escapePathName(column)}=${escapePathName(value ?? HIVE_DEFAULT_PARTITION)}/`)
    .join('');
}

/**
 * Characters a URI path holds as they are (RFC 2396 `pchar` and `/`): unreserved, the punctuation
 * `;:@&=+$,`. Non-ASCII too, as java.net.URI's "other" category, unless it is a control or space
 * character. Everything else is `%XX` of its UTF-8 bytes, `%` itself included: Hadoop's `Path.toUri`,
 * which Spark's Delta writer names each `add.path` with.
 */
const URI_PLAIN = /[A-Za-z0-9\-_.!~*'();:@&=+$,/]/;
const URI_QUOTED_OTHER = /[\p{Zs}\p{Zl}\p{Zp}\u0080-\u009f]/u;

/** `add.path` of a data file at `key` under the table root (PROTOCOL.md "Add File": a URI, decoded by readers). */
export function addPathOf(key: string): string {
  let out = '';
  for (const c of key) {
    const plain = c.charCodeAt(0) < 0x80 ? URI_PLAIN.test(c) : !URI_QUOTED_OTHER.test(c);
    out += plain ? c : encodeURIComponent(c).replace(/[!'()*]/g, (x) => `%${x.charCodeAt(0).toString(16)}`);
  }
  return out;
}

/** The key under the table root of a data file an `add.path` (relative) names. */
export const dataFileKeyOf = (addPath: string): string => decodeURIComponent(addPath);

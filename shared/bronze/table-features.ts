import type { ProtocolAction } from './delta-actions.ts';
import { usesTimestampNtz } from './delta-types.ts';
import type { TableSchema } from './schema.ts';
import { hasTypeChanges, TYPE_WIDENING_FEATURE } from './type-widening.ts';

/** A table without table features (PROTOCOL.md "Protocol Evolution"): what every version 0 had so far. */
export const LEGACY_PROTOCOL: ProtocolAction = { minReaderVersion: 1, minWriterVersion: 2 };

/**
 * Writer features this sink implements (PROTOCOL.md "Table Features": "to write a table, writers must
 * implement and respect all features listed in `writerFeatures`"): `appendOnly` (it only ever adds files),
 * `invariants` (it refuses a table with a `delta.invariants` column: `checkWritable`), `timestampNtz` (it
 * writes such columns), `typeWidening` (it records each type change in the field metadata, keeps those it finds,
 * and widens only as PROTOCOL.md "Type Widening" allows and only when `delta.enableTypeWidening` is true:
 * type-widening.ts). Anything else another writer enabled (deletion vectors, row tracking, column
 * mapping, CHECK constraints, v2 checkpoints, domain metadata...) would need work it does not do, such as
 * keeping `deletionVector` or `baseRowId` in the checkpoints it writes.
 */
const WRITER_FEATURES = new Set(['appendOnly', 'invariants', 'timestampNtz', TYPE_WIDENING_FEATURE]);
/**
 * Reader features it implements ("because writers have to read the table ... they must implement and
 * respect all reader features as well"). `typeWidening`: a file written before a change is read in its own
 * types and converted exactly (fit.ts), or left alone (optimize rewrites only files in the table's types).
 */
const READER_FEATURES = new Set(['timestampNtz', TYPE_WIDENING_FEATURE]);

/** Why this sink may not append to a table with `protocol`, or an empty list. */
export function protocolProblems(protocol: ProtocolAction): string[] {
  const { minWriterVersion: writer } = protocol;
  const problems: string[] = [];
  if (writer === 7) {
    const unknown = (protocol.writerFeatures ?? []).filter((f) => !WRITER_FEATURES.has(f));
    if (unknown.length > 0)
      problems.push(`its protocol has writer features this sink does not implement: ${unknown.join(', ')}`);
  } else if (writer > 2)
    // Legacy writer versions 3-6 imply CHECK constraints, change data feed, generated columns, column
    // mapping or identity columns (PROTOCOL.md "Protocol Evolution").
    problems.push(
      `its protocol needs writer version ${writer}; this sink writes version 2 or 7 with table features`,
    );
  return [...problems, ...readerProblems(protocol)];
}

/**
 * Why this code may not read a table with `protocol` (PROTOCOL.md "Table Features": readers must implement
 * every feature in `readerFeatures`; reader version 2 is column mapping), or an empty list: a table with
 * deletion vectors or mapped column names would be counted or read wrong, not refused.
 */
export function readerProblems(protocol: ProtocolAction): string[] {
  const reader = protocol.minReaderVersion;
  if (reader === 3) {
    const unknown = (protocol.readerFeatures ?? []).filter((f) => !READER_FEATURES.has(f));
    return unknown.length > 0
      ? [`its protocol has reader features this sink does not implement: ${unknown.join(', ')}`]
      : [];
  }
  return reader === 2 || reader > 3 ? [`its protocol needs reader version ${reader}`] : [];
}

/** Reader-writer features a schema needs: `timestampNtz` for such a column, `typeWidening` once one widened. */
function neededFeatures(schema: TableSchema): string[] {
  const features: string[] = [];
  if (schema.some((c) => usesTimestampNtz(c.type))) features.push('timestampNtz');
  if (hasTypeChanges(schema)) features.push(TYPE_WIDENING_FEATURE);
  return features;
}

const supports = (p: ProtocolAction, feature: string) =>
  p.minReaderVersion === 3 &&
  p.minWriterVersion === 7 &&
  (p.readerFeatures ?? []).includes(feature) &&
  (p.writerFeatures ?? []).includes(feature);

/** Features a legacy writer version implies, as Delta lists them when it upgrades a table to writer 7. */
function impliedWriterFeatures(p: ProtocolAction): string[] {
  if (p.minWriterVersion === 7) return [...(p.writerFeatures ?? [])];
  return p.minWriterVersion >= 2 ? ['appendOnly', 'invariants'] : [];
}

const union = (a: readonly string[], b: readonly string[]) => [...a, ...b.filter((f) => !a.includes(f))];

/**
 * The `protocol` action a commit must carry, or undefined when the table's protocol stays as it is.
 * A `timestamp_ntz` column needs reader version 3, writer version 7 and the feature `timestampNtz` in both
 * lists (PROTOCOL.md "Timestamp without timezone (TimestampNtz)", "Table Features"); a widened column the
 * feature `typeWidening` the same way (PROTOCOL.md "Type Widening"); and only then: the commit that first
 * needs one upgrades the protocol, never an earlier one, so tables without them stay readable by readers
 * without table features. A new table lists just those features; an upgraded one keeps every feature it
 * had: `appendOnly` and `invariants`, which its writer version 2 implied ("Table Features for New and
 * Existing Tables"; the reference implementation lists them the same way when it upgrades), or the
 * features another writer already listed ("Supported Features": clients must not remove a feature).
 * The decision rests on `current`, the table's protocol, not on its schema: another writer may have
 * upgraded it already.
 */
export function protocolChange(
  current: ProtocolAction | undefined,
  next: TableSchema,
): ProtocolAction | undefined {
  const needed = neededFeatures(next);
  if (current === undefined)
    return needed.length > 0
      ? { minReaderVersion: 3, minWriterVersion: 7, readerFeatures: needed, writerFeatures: needed }
      : LEGACY_PROTOCOL;
  if (needed.every((f) => supports(current, f))) return undefined;
  return {
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: union(current.minReaderVersion === 3 ? (current.readerFeatures ?? []) : [], needed),
    writerFeatures: union(impliedWriterFeatures(current), needed),
  };
}

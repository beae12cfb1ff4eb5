import { usesTimestampNtz } from './delta-types.ts';
import type { ProtocolAction } from './log-state.ts';
import type { TableSchema } from './schema.ts';

/** A table without table features (PROTOCOL.md "Protocol Evolution"): what every version 0 had so far. */
export const LEGACY_PROTOCOL: ProtocolAction = { minReaderVersion: 1, minWriterVersion: 2 };

const needsTimestampNtz = (schema: TableSchema) => schema.some((c) => usesTimestampNtz(c.type));

/**
 * The `protocol` action a commit must carry, or undefined when the table's protocol stays as it is.
 * A `timestamp_ntz` column needs reader version 3, writer version 7 and the feature `timestampNtz` in both
 * lists (PROTOCOL.md "Timestamp without timezone (TimestampNtz)", "Table Features"), and only then: the
 * commit that first adds one upgrades the protocol, never an earlier one, so tables without it stay
 * readable by readers without table features. A new table lists just that feature; an upgraded one also
 * keeps `appendOnly` and `invariants`, the features its writer version 2 implied ("Table Features for New
 * and Existing Tables"; the reference implementation lists them the same way when it upgrades).
 */
export function protocolChange(
  previous: TableSchema | undefined,
  next: TableSchema,
): ProtocolAction | undefined {
  const ntz = needsTimestampNtz(next);
  if (previous === undefined)
    return ntz
      ? {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ['timestampNtz'],
          writerFeatures: ['timestampNtz'],
        }
      : LEGACY_PROTOCOL;
  if (!ntz || needsTimestampNtz(previous)) return undefined;
  return {
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: ['timestampNtz'],
    writerFeatures: ['appendOnly', 'invariants', 'timestampNtz'],
  };
}

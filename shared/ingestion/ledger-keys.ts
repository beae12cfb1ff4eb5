/** Item keys of the single-table ledger. pk spreads per file, so claims never share a partition key. */
export const SK = { file: 'F', batch: 'B', table: 'T' } as const;

export const fileKey = (table: string, identity: string) => ({
  pk: `FILE#${table}#${identity}`,
  sk: SK.file,
});
export const batchKey = (table: string, batchId: string) => ({
  pk: `BATCH#${table}#${batchId}`,
  sk: SK.batch,
});
export const tableKey = (table: string) => ({ pk: `TABLE#${table}`, sk: SK.table });
/**
 * Quarantine partitions per day. One day of bad input (a misconfigured producer sending thousands of
 * malformed messages) would otherwise be one partition key, whose writes DynamoDB caps per partition.
 */
export const QUARANTINE_SHARDS = 8;

/** FNV-1a: a stable, dependency-free spread of ids over the shards. */
function shardOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % QUARANTINE_SHARDS;
}

export const quarantineKey = (day: string, id: string) => ({
  pk: `QUARANTINE#${day}#${shardOf(id)}`,
  sk: id,
});

/**
 * Every partition that can hold a day's quarantine entries: its shards, and the unsharded
 * `QUARANTINE#<day>` that ledgers written before the sharding hold.
 */
export const quarantinePartitions = (day: string): string[] => [
  ...Array.from({ length: QUARANTINE_SHARDS }, (_, shard) => `QUARANTINE#${day}#${shard}`),
  `QUARANTINE#${day}`,
];

/** Sparse index of batches with work left (SEALED, or COMMITTED and not yet published): only those items carry its key attributes. */
export const SEALED_INDEX = { name: 'sealed', partitionKey: 'sealedTable', sortKey: 'sealedAt' } as const;

export function parseFilePk(pk: string): { table: string; identity: string } | undefined {
  if (!pk.startsWith('FILE#')) return undefined;
  const rest = pk.slice('FILE#'.length);
  const hash = rest.indexOf('#');
  return { table: rest.slice(0, hash), identity: rest.slice(hash + 1) };
}

/** `SINK#<table>`: the bronze sink's cursor, in the ledger table beside `TABLE#<table>`. */
export const sinkCursorKey = (table: string) => ({ pk: `SINK#${table}`, sk: 'S' });

/** cleanSource's cursor: its own item, so the sink's full-item put of `S` never overwrites it. */
export const cleanCursorKey = (table: string) => ({ pk: `SINK#${table}`, sk: 'C' });

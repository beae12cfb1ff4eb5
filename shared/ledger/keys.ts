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
export const quarantineKey = (day: string, id: string) => ({ pk: `QUARANTINE#${day}`, sk: id });

/** Sparse index of SEALED, uncommitted batches: only those items carry its key attributes. */
export const SEALED_INDEX = { name: 'sealed', partitionKey: 'sealedTable', sortKey: 'sealedAt' } as const;

export function parseFilePk(pk: string): { table: string; identity: string } | undefined {
  if (!pk.startsWith('FILE#')) return undefined;
  const rest = pk.slice('FILE#'.length);
  const hash = rest.indexOf('#');
  return { table: rest.slice(0, hash), identity: rest.slice(hash + 1) };
}

import { parquetReadObjects } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type {
  AddAction,
  LogState,
  MetaDataAction,
  ProtocolAction,
  RemoveAction,
  TxnAction,
} from './log-state.ts';

/**
 * Classic single-file checkpoints, V1 spec (PROTOCOL.md "Checkpoints", "Classic checkpoint", "V1 Spec",
 * "Checkpoint Schema", "Last Checkpoint File Schema"): one Parquet file holding the reconciled actions at a
 * version, one action per row (exactly one of the top-level columns set), and `_delta_log/_last_checkpoint`
 * pointing at the newest one.
 */
export function checkpointName(deltaVersion: number): string {
  return `${String(deltaVersion).padStart(20, '0')}.checkpoint.parquet`;
}

export const LAST_CHECKPOINT = '_last_checkpoint';

/** `_last_checkpoint` as this sink writes it (the optional fields readers use to size their reads). */
export interface LastCheckpoint {
  readonly version: number;
  /** Actions (rows) in the checkpoint. */
  readonly size: number;
  readonly sizeInBytes: number;
  readonly numOfAddFiles: number;
}

// Parquet schema elements (depth-first, groups give num_children), the layout Spark and delta-rs write.
const str = (name: string) => ({
  name,
  type: 'BYTE_ARRAY' as const,
  repetition_type: 'OPTIONAL' as const,
  converted_type: 'UTF8' as const,
  logical_type: { type: 'STRING' as const },
});
const i64 = (name: string) => ({ name, type: 'INT64' as const, repetition_type: 'OPTIONAL' as const });
const i32 = (name: string) => ({ name, type: 'INT32' as const, repetition_type: 'OPTIONAL' as const });
const bool = (name: string) => ({ name, type: 'BOOLEAN' as const, repetition_type: 'OPTIONAL' as const });
const group = (name: string, children: number) => ({
  name,
  repetition_type: 'OPTIONAL' as const,
  num_children: children,
});
/** map<string,string>: `optional group (MAP) { repeated group key_value { required key; optional value } }`. */
const stringMap = (name: string) => [
  { name, repetition_type: 'OPTIONAL' as const, converted_type: 'MAP' as const, num_children: 1 },
  { name: 'key_value', repetition_type: 'REPEATED' as const, num_children: 2 },
  { ...str('key'), repetition_type: 'REQUIRED' as const },
  str('value'),
];
/** array<string>, the three-level LIST layout. */
const stringList = (name: string) => [
  { name, repetition_type: 'OPTIONAL' as const, converted_type: 'LIST' as const, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
  str('element'),
];

const CHECKPOINT_SCHEMA = [
  { name: 'schema', num_children: 5 },
  group('txn', 3),
  str('appId'),
  i64('version'),
  i64('lastUpdated'),
  group('add', 7),
  str('path'),
  ...stringMap('partitionValues'),
  i64('size'),
  i64('modificationTime'),
  bool('dataChange'),
  str('stats'),
  ...stringMap('tags'),
  group('remove', 3),
  str('path'),
  i64('deletionTimestamp'),
  bool('dataChange'),
  group('metaData', 8),
  str('id'),
  str('name'),
  str('description'),
  group('format', 2),
  str('provider'),
  ...stringMap('options'),
  str('schemaString'),
  ...stringList('partitionColumns'),
  ...stringMap('configuration'),
  i64('createdTime'),
  group('protocol', 4),
  i32('minReaderVersion'),
  i32('minWriterVersion'),
  ...stringList('readerFeatures'),
  ...stringList('writerFeatures'),
];

const big = (n: number | null | undefined) => (n === null || n === undefined ? null : BigInt(n));

type Row = {
  txn?: unknown;
  add?: unknown;
  remove?: unknown;
  metaData?: unknown;
  protocol?: unknown;
};

/** Rows in the order Spark writes them: protocol, metaData, txns, then files sorted by path (deterministic). */
function checkpointRows(state: LogState): Row[] {
  const rows: Row[] = [];
  if (state.protocol)
    rows.push({
      protocol: {
        minReaderVersion: state.protocol.minReaderVersion,
        minWriterVersion: state.protocol.minWriterVersion,
        readerFeatures: state.protocol.readerFeatures ? [...state.protocol.readerFeatures] : null,
        writerFeatures: state.protocol.writerFeatures ? [...state.protocol.writerFeatures] : null,
      },
    });
  if (state.metaData) {
    const m = state.metaData;
    rows.push({
      metaData: {
        id: m.id,
        name: m.name ?? null,
        description: m.description ?? null,
        format: { provider: m.format.provider, options: m.format.options ?? {} },
        schemaString: m.schemaString,
        partitionColumns: [...m.partitionColumns],
        configuration: m.configuration ?? {},
        createdTime: big(m.createdTime),
      },
    });
  }
  for (const t of [...state.txns.values()].sort((a, b) => a.appId.localeCompare(b.appId)))
    rows.push({ txn: { appId: t.appId, version: BigInt(t.version), lastUpdated: big(t.lastUpdated) } });
  const byPath = <T extends { path: string }>(xs: Iterable<T>) =>
    [...xs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const a of byPath(state.adds.values()))
    rows.push({
      add: {
        path: a.path,
        partitionValues: a.partitionValues,
        size: BigInt(a.size),
        modificationTime: BigInt(a.modificationTime),
        dataChange: a.dataChange,
        stats: a.stats ?? null,
        tags: a.tags ?? null,
      },
    });
  for (const r of byPath(state.removes.values()))
    rows.push({
      remove: { path: r.path, deletionTimestamp: big(r.deletionTimestamp), dataChange: r.dataChange },
    });
  return rows;
}

/** The checkpoint of `state` as Parquet bytes, with what `_last_checkpoint` says about it. */
export function buildCheckpoint(state: LogState): { bytes: Uint8Array; last: LastCheckpoint } {
  const rows = checkpointRows(state);
  const bytes = new ByteWriter();
  const writer = new ParquetWriter({
    writer: bytes,
    schema: CHECKPOINT_SCHEMA,
    // A fixed creator keeps a rewrite of the same checkpoint byte-identical.
    createdBy: 'inlet bronze sink (hyparquet-writer)',
  });
  const columns = ['txn', 'add', 'remove', 'metaData', 'protocol'] as const;
  writer.write({
    columnData: columns.map((name) => ({ name, data: rows.map((r) => r[name] ?? null) })),
    rowGroupSize: Math.max(rows.length, 1),
  });
  writer.finish();
  const out = bytes.getBytes();
  return {
    bytes: out,
    last: {
      version: state.version,
      size: rows.length,
      sizeInBytes: out.byteLength,
      numOfAddFiles: state.adds.size,
    },
  };
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v as bigint | number));
/** hyparquet reads a map as a plain object (or null); keep it an object. */
const record = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, string>) : {});

/** A checkpoint file read back into a state at `version`: what any reader does before the newer commits. */
export async function readCheckpoint(version: number, bytes: Uint8Array): Promise<LogState> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file })) as Record<string, Record<string, unknown> | null>[];
  const state: LogState = { version, txns: new Map(), adds: new Map(), removes: new Map() };
  for (const row of rows) {
    const { protocol, metaData, txn, add, remove } = row;
    if (protocol)
      state.protocol = {
        minReaderVersion: Number(protocol.minReaderVersion),
        minWriterVersion: Number(protocol.minWriterVersion),
        // Absent rather than null, as in the JSON commit (the two replays compare equal).
        ...(Array.isArray(protocol.readerFeatures)
          ? { readerFeatures: protocol.readerFeatures as string[] }
          : {}),
        ...(Array.isArray(protocol.writerFeatures)
          ? { writerFeatures: protocol.writerFeatures as string[] }
          : {}),
      } satisfies ProtocolAction;
    if (metaData) {
      const format = (metaData.format ?? {}) as Record<string, unknown>;
      state.metaData = {
        id: String(metaData.id),
        name: (metaData.name as string | null) ?? null,
        // Absent rather than null, as in the JSON commit this sink wrote (the two replays compare equal).
        ...(typeof metaData.description === 'string' ? { description: metaData.description } : {}),
        format: { provider: String(format.provider ?? 'parquet'), options: record(format.options) },
        schemaString: String(metaData.schemaString),
        partitionColumns: (metaData.partitionColumns as string[] | null) ?? [],
        configuration: record(metaData.configuration),
        createdTime: num(metaData.createdTime),
      } satisfies MetaDataAction;
    }
    if (txn) {
      const t: TxnAction = {
        appId: String(txn.appId),
        version: Number(txn.version),
        lastUpdated: num(txn.lastUpdated),
      };
      state.txns.set(t.appId, t);
    }
    if (add) {
      const a: AddAction = {
        path: String(add.path),
        partitionValues: record(add.partitionValues),
        size: Number(add.size),
        modificationTime: Number(add.modificationTime),
        dataChange: Boolean(add.dataChange),
        stats: (add.stats as string | null) ?? null,
        tags: add.tags ? record(add.tags) : null,
      };
      state.adds.set(a.path, a);
    }
    if (remove) {
      const r: RemoveAction = {
        path: String(remove.path),
        deletionTimestamp: num(remove.deletionTimestamp),
        dataChange: Boolean(remove.dataChange),
      };
      state.removes.set(r.path, r);
    }
  }
  return state;
}

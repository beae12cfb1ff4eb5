import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { decodeAction, type StateAction } from './delta-actions.ts';
import type { LogPlace } from './errors.ts';
import { applyAction, type LogState } from './log-state.ts';
import type { LogFileStream, RandomAccessObject } from './ports.ts';

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

/** Part `part` of `parts` of a multi-part checkpoint (PROTOCOL.md "Multi-part checkpoint"; Spark writes them). */
export function checkpointPartName(deltaVersion: number, part: number, parts: number): string {
  const ten = (n: number) => String(n).padStart(10, '0');
  return `${String(deltaVersion).padStart(20, '0')}.checkpoint.${ten(part)}.${ten(parts)}.parquet`;
}

/** `_last_checkpoint` as this sink writes it (the optional fields readers use to size their reads). */
export interface LastCheckpoint {
  readonly version: number;
  /** Actions (rows) in the checkpoint. */
  readonly size: number;
  readonly sizeInBytes: number;
  readonly numOfAddFiles: number;
  /** Set by writers of multi-part checkpoints; this sink writes one file. */
  readonly parts?: number;
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

/**
 * The non-file actions first: a reader that wants only them (the sink's head, `CHECKPOINT_STATE_COLUMNS`)
 * reads one contiguous range per row group. Readers find columns by name, so the order is free.
 */
const CHECKPOINT_SCHEMA = [
  { name: 'schema', num_children: 5 },
  group('protocol', 4),
  i32('minReaderVersion'),
  i32('minWriterVersion'),
  ...stringList('readerFeatures'),
  ...stringList('writerFeatures'),
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
];

const big = (n: number | null | undefined) => (n === null || n === undefined ? null : BigInt(n));

const COLUMNS = ['protocol', 'metaData', 'txn', 'add', 'remove'] as const;
type Column = (typeof COLUMNS)[number];
/** What a writer needs of a table besides its files: read first, and alone, by the sink. */
export const CHECKPOINT_STATE_COLUMNS: readonly Column[] = ['protocol', 'metaData', 'txn'];
export const CHECKPOINT_FILE_COLUMNS: readonly Column[] = ['add', 'remove'];

/** An action as the checkpoint's Parquet columns hold it (longs as bigint, absent fields null). */
function toRow(action: StateAction): Partial<Record<Column, unknown>> {
  if ('protocol' in action)
    return {
      protocol: {
        minReaderVersion: action.protocol.minReaderVersion,
        minWriterVersion: action.protocol.minWriterVersion,
        readerFeatures: action.protocol.readerFeatures ? [...action.protocol.readerFeatures] : null,
        writerFeatures: action.protocol.writerFeatures ? [...action.protocol.writerFeatures] : null,
      },
    };
  if ('metaData' in action) {
    const m = action.metaData;
    return {
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
    };
  }
  if ('txn' in action) {
    const t = action.txn;
    return { txn: { appId: t.appId, version: BigInt(t.version), lastUpdated: big(t.lastUpdated) } };
  }
  if ('add' in action) {
    const a = action.add;
    return {
      add: {
        path: a.path,
        partitionValues: a.partitionValues,
        size: BigInt(a.size),
        modificationTime: BigInt(a.modificationTime),
        dataChange: a.dataChange,
        stats: a.stats ?? null,
        tags: a.tags ?? null,
      },
    };
  }
  const r = action.remove;
  return { remove: { path: r.path, deletionTimestamp: big(r.deletionTimestamp), dataChange: r.dataChange } };
}

/** Rows per row group: a bounded batch in memory, whatever the table's size. */
export const CHECKPOINT_ROW_GROUP_ROWS = 10_000;

/** hyparquet-writer's byte buffer, drained into the stream after each row group instead of kept whole. */
class StreamingBytes extends ByteWriter {
  constructor(private readonly out: LogFileStream) {
    super(1024 * 1024);
  }

  /** ParquetWriter awaits this after each row group (and `finish` after the footer). */
  flush(): Promise<void> {
    const chunk = new Uint8Array(this.buffer.slice(0, this.index));
    this.index = 0;
    return chunk.byteLength > 0 ? this.out.write(chunk) : Promise.resolve();
  }

  override finish(): Promise<void> {
    return this.flush();
  }
}

/**
 * A classic V1 checkpoint written a row group at a time into a stream (a multipart upload on S3), so its
 * memory is one row group and one upload part, not the table: every reader reads a multi-row-group Parquet
 * file, unlike the V2/sidecar layout, which needs the `v2Checkpoint` table feature (reader 3, writer 7).
 */
export class CheckpointWriter {
  private rows: Array<Partial<Record<Column, unknown>>> = [];
  private readonly bytes: StreamingBytes;
  private readonly parquet: ParquetWriter;
  private actions = 0;
  private addFiles = 0;

  constructor(
    out: LogFileStream,
    private readonly rowGroupRows = CHECKPOINT_ROW_GROUP_ROWS,
  ) {
    this.bytes = new StreamingBytes(out);
    this.parquet = new ParquetWriter({
      writer: this.bytes,
      schema: CHECKPOINT_SCHEMA,
      // A fixed creator keeps a rewrite of the same checkpoint byte-identical.
      createdBy: 'inlet bronze sink (hyparquet-writer)',
    });
  }

  async write(action: StateAction): Promise<void> {
    this.rows.push(toRow(action));
    this.actions += 1;
    if ('add' in action) this.addFiles += 1;
    if (this.rows.length >= this.rowGroupRows) await this.flushRowGroup();
  }

  /** Ends the file; what `_last_checkpoint` says about it, less its version. */
  async finish(): Promise<Omit<LastCheckpoint, 'version'>> {
    await this.flushRowGroup();
    await this.parquet.finish();
    return { size: this.actions, sizeInBytes: this.bytes.offset, numOfAddFiles: this.addFiles };
  }

  private async flushRowGroup(): Promise<void> {
    if (this.rows.length === 0) return;
    const rows = this.rows;
    this.rows = [];
    await this.parquet.write({
      columnData: COLUMNS.map((name) => ({ name, data: rows.map((r) => r[name] ?? null) })),
      rowGroupSize: rows.length,
    });
  }
}

/** A Parquet long (bigint) as the JSON number the action schemas check; null and absent stay so. */
const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
/** hyparquet reads an absent map as null; the actions keep an empty one, as the writer wrote it. */
const map = (v: unknown) => v ?? {};
const defined = (entries: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));

/**
 * A checkpoint row's action in the shape its JSON commit had (longs as numbers, maps as objects, absent
 * optional arrays absent), so the two replays compare equal, then checked by the same schema as a commit's.
 */
function fromRow(
  place: LogPlace,
  row: Record<string, Record<string, unknown> | null | undefined>,
): StateAction[] {
  const candidates: Array<[string, Record<string, unknown>]> = [];
  const { protocol, metaData, txn, add, remove } = row;
  if (protocol)
    candidates.push([
      'protocol',
      defined({
        minReaderVersion: protocol.minReaderVersion,
        minWriterVersion: protocol.minWriterVersion,
        readerFeatures: protocol.readerFeatures ?? undefined,
        writerFeatures: protocol.writerFeatures ?? undefined,
      }),
    ]);
  if (metaData) {
    const format = (metaData.format ?? {}) as Record<string, unknown>;
    candidates.push([
      'metaData',
      defined({
        id: metaData.id,
        name: metaData.name ?? null,
        description: metaData.description ?? undefined,
        format: { provider: format.provider ?? 'parquet', options: map(format.options) },
        schemaString: metaData.schemaString,
        partitionColumns: metaData.partitionColumns ?? [],
        configuration: map(metaData.configuration),
        createdTime: num(metaData.createdTime) ?? null,
      }),
    ]);
  }
  if (txn)
    candidates.push([
      'txn',
      { appId: txn.appId, version: num(txn.version), lastUpdated: num(txn.lastUpdated) ?? null },
    ]);
  if (add)
    candidates.push([
      'add',
      {
        path: add.path,
        partitionValues: map(add.partitionValues),
        size: num(add.size),
        modificationTime: num(add.modificationTime),
        dataChange: add.dataChange,
        stats: add.stats ?? null,
        tags: add.tags ?? null,
      },
    ]);
  if (remove)
    candidates.push([
      'remove',
      {
        path: remove.path,
        deletionTimestamp: num(remove.deletionTimestamp) ?? null,
        dataChange: remove.dataChange,
      },
    ]);
  return candidates.map(([type, value]) => decodeAction(place, type, value) as StateAction);
}

/**
 * A checkpoint's actions, read one row group at a time (ranged reads, only the `columns` asked for), so
 * memory is one row group whatever the table's size. Works on any writer's V1 checkpoint: a column it lacks
 * is read as null (PROTOCOL.md "Checkpoints": "Any missing column should be treated as null").
 */
export async function* readCheckpointActions(
  file: RandomAccessObject,
  columns: readonly Column[],
  /** The checkpoint's version and file name (and table), for errors. */
  place: Omit<LogPlace, 'checkpoint'> & { readonly file: string },
): AsyncGenerator<StateAction> {
  const metadata = await parquetMetadataAsync(file);
  const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name));
  const wanted = columns.filter((c) => present.has(c));
  if (wanted.length === 0) return;
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, columns: wanted, rowStart: start, rowEnd: end });
    start = end;
    for (const [i, row] of rows.entries()) {
      const at = { ...place, checkpoint: { file: place.file, row: start - rows.length + i + 1 } };
      yield* fromRow(at, row as Record<string, Record<string, unknown> | null | undefined>);
    }
  }
}

/** A RandomAccessObject over bytes in memory. */
export function bytesObject(bytes: Uint8Array): RandomAccessObject {
  return {
    byteLength: bytes.byteLength,
    slice: async (start, end = bytes.byteLength) =>
      bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + end) as ArrayBuffer,
  };
}

/** A checkpoint file read back whole into a state at `version` (tests and the simulation's checks). */
export async function readCheckpoint(version: number, bytes: Uint8Array): Promise<LogState> {
  const state: LogState = { version, txns: new Map(), adds: new Map(), removes: new Map() };
  const place = { version, file: checkpointName(version) };
  for await (const action of readCheckpointActions(bytesObject(bytes), COLUMNS, place))
    applyAction(state, action);
  return state;
}

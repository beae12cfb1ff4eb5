import type { Clock } from '../kernel/clock.ts';
import { InletError } from '../kernel/errors.ts';
import { type AddAction, type DeltaAction, parseActions, serializeActions } from './delta-actions.ts';
import { typeText } from './delta-types.ts';
import { RESCUED_ROWS_TAG } from './log-state.ts';

export { DEFAULT_TARGET_FILE_BYTES } from './maintenance-config.ts';

import { LogPut } from './log-put.ts';
import { type DataFile, ParquetSplitter } from './parquet-file.ts';
import { parquetRecords } from './parquet-records.ts';
import { addPathOf, dataFileKeyOf, partitionDirectory } from './partition-paths.ts';
import type { DeltaStore } from './ports.ts';
import { fileColumns, fromDeltaSchemaString, type TableSchema } from './schema.ts';
import { replayFiles, replayLog } from './snapshot.ts';
import { protocolProblems } from './table-features.ts';
import type { TableFiles } from './table-files.ts';
import { Unstorable } from './values.ts';

/** Other writers' commits stepped over for one bin before the run stops (the sink appends about one a minute). */
const MAX_FOREIGN = 1000;

export interface OptimizeOptions {
  readonly table: string;
  /** Files smaller than this are rewritten, packed into files of about this size. */
  readonly targetFileBytes: number;
  /** epoch ms: no bin starts after it, and a bin still reading at it is abandoned (its files are orphans). */
  readonly finishBy: number;
  /** Rows per row group of the new files (the sink's 10,000 by default). */
  readonly rowGroupRows?: number;
}

export interface OptimizeDeps extends Clock {
  readonly delta: DeltaStore;
  readonly files: TableFiles;
  /** A UUID per attempt at a bin: in every new file's name. */
  readonly newId: () => string;
}

export interface OptimizeResult {
  /** Delta commits made, one per bin. */
  readonly commits: number;
  readonly filesRemoved: number;
  readonly filesAdded: number;
  /** Bytes of the files rewritten, and of the files written in their place. */
  readonly bytesRead: number;
  readonly bytesWritten: number;
  /** Bins left as they were: another writer touched an input, or an input could not be rewritten exactly. */
  readonly binsSkipped: number;
  /** Why the run stopped before its plan was done, if it did: out of time, or the table's schema moved. */
  readonly stoppedBy?: 'time' | 'metadata' | 'unwritable';
  /** The Delta version of the run's last commit, when it made one. */
  readonly lastVersion?: number;
}

/**
 * Small files, oldest first (the order they were added in, then by path), packed greedily into bins of at most
 * `target` bytes, each bin within one partition (a file's partition values are its rows' values: PROTOCOL.md
 * "Add File and Remove File"); a bin of one file is not worth a rewrite. As delta-rs's `create_merge_plan`
 * bins them, per partition.
 */
export function planBins(adds: readonly AddAction[], target: number): AddAction[][] {
  const small = adds
    .filter((a) => a.size < target)
    .sort(
      (a, b) => a.modificationTime - b.modificationTime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    );
  // Partitions in the order of their oldest small file.
  const partitions = new Map<string, AddAction[]>();
  for (const add of small) {
    const key = JSON.stringify(Object.entries(add.partitionValues).sort(([a], [b]) => (a < b ? -1 : 1)));
    const files = partitions.get(key) ?? [];
    files.push(add);
    partitions.set(key, files);
  }
  const bins: AddAction[][] = [];
  for (const files of partitions.values()) {
    let bin: AddAction[] = [];
    let bytes = 0;
    for (const add of files) {
      if (bin.length > 0 && bytes + add.size > target) {
        bins.push(bin);
        bin = [];
        bytes = 0;
      }
      bin.push(add);
      bytes += add.size;
    }
    bins.push(bin);
  }
  return bins.filter((b) => b.length > 1);
}

/** What the commits after the snapshot did that a bin must not overlap (O4, docs/protocol.md). */
interface Seen {
  /** The last Delta version read or written. */
  version: number;
  /** Paths another writer added or removed since the snapshot. */
  readonly touched: Set<string>;
}

class BinSkipped extends Error {}

/**
 * Rewrites a bronze table's small files into large ones, one Delta commit per bin (`remove` + `add`,
 * `dataChange: false`), committed optimistically beside the sink: docs/protocol.md "Bronze optimize and
 * vacuum" (O1-O4, why no lease, the crash points).
 */
export async function optimizeTable(deps: OptimizeDeps, options: OptimizeOptions): Promise<OptimizeResult> {
  const { table } = options;
  const replay = await replayLog(deps.delta, { table });
  const tally: { -readonly [K in keyof OptimizeResult]: OptimizeResult[K] } = {
    commits: 0,
    filesRemoved: 0,
    filesAdded: 0,
    bytesRead: 0,
    bytesWritten: 0,
    binsSkipped: 0,
  };
  if (!replay.metaData || !replay.protocol) return tally;
  if (protocolProblems(replay.protocol).length > 0) return { ...tally, stoppedBy: 'unwritable' };
  const schema = fromDeltaSchemaString(replay.metaData.schemaString);
  const { partitionColumns } = replay.metaData;
  const live: AddAction[] = [];
  for await (const action of replayFiles(deps.delta, replay)) if ('add' in action) live.push(action.add);
  const seen: Seen = { version: replay.version, touched: new Set() };
  for (const bin of planBins(live, options.targetFileBytes)) {
    if (deps.now() >= options.finishBy) return { ...tally, stoppedBy: 'time' };
    let written: DataFile[];
    try {
      written = await rewrite(deps, { schema, partitionColumns }, bin, options);
    } catch (error) {
      if (!(error instanceof BinSkipped)) throw error;
      tally.binsSkipped += 1;
      continue;
    }
    // PROTOCOL.md's timestamps are Longs: whole milliseconds (a checkpoint stores them as INT64).
    const body = optimizeCommit(bin, written, Math.floor(deps.now()), options.targetFileBytes);
    const outcome = await commitBin(deps, table, seen, bin, body);
    if (outcome === 'metadata') return { ...tally, stoppedBy: 'metadata' };
    if (outcome === 'conflict') {
      tally.binsSkipped += 1;
      continue;
    }
    tally.commits += 1;
    tally.lastVersion = seen.version;
    tally.filesRemoved += bin.length;
    tally.filesAdded += written.length;
    tally.bytesRead += bin.reduce((sum, a) => sum + a.size, 0);
    tally.bytesWritten += written.reduce((sum, f) => sum + f.bytes.byteLength, 0);
  }
  return tally;
}

/**
 * The bin's rows, in order, into new files of about the target size, uploaded (O3). A partitioned table's
 * files hold every column but the partition columns (their values are the add's `partitionValues`, kept),
 * under the partition's Hive-style directory, as the sink writes them.
 */
async function rewrite(
  deps: OptimizeDeps,
  table: { readonly schema: TableSchema; readonly partitionColumns: readonly string[] },
  bin: readonly AddAction[],
  options: OptimizeOptions,
): Promise<DataFile[]> {
  const attempt = deps.newId();
  const columns = fileColumns(table.schema, table.partitionColumns);
  const types = new Map(columns.map((c) => [c.name, typeText(c.type)]));
  const values = table.partitionColumns.map((c) => [c, bin[0]?.partitionValues[c] ?? null] as const);
  const directory = partitionDirectory(values);
  const written: DataFile[] = [];
  const splitter = new ParquetSplitter({
    schema: table.schema,
    columns,
    manifestVersion: 0,
    attempt,
    // Bigger than the target: the splitter closes a file once it has passed this, checked per row group.
    maxFileBytes: options.targetFileBytes,
    rowGroupRows: options.rowGroupRows,
    ...(values.length > 0 ? { partition: { directory, values: Object.fromEntries(values) } } : {}),
    pathOf: (index) =>
      `${directory}part-optimize-${attempt}-${String(index).padStart(5, '0')}.snappy.parquet`,
    onFile: async (file) => {
      await deps.delta.putDataFile(file.path, file.bytes);
      written.push(file);
    },
  });
  for (const add of bin) {
    if (deps.now() >= options.finishBy) throw new BinSkipped('out of time');
    const records = parquetRecords(await deps.files.open(dataFileKeyOf(add.path)));
    for await (const record of records) {
      if (record.kind === 'corrupt') throw new BinSkipped(`${add.path}: ${record.reason}`);
      if (record.kind === 'columns') {
        // Only files in the table's own types can be rewritten exactly (another writer's may differ).
        for (const c of record.columns)
          if (types.get(c.name) !== typeText(c.type)) throw new BinSkipped(`${add.path}: column ${c.name}`);
        continue;
      }
      const row: Record<string, unknown> = Object.create(null);
      for (const c of columns) {
        const cell = record.values[c.name] ?? null;
        if (cell instanceof Unstorable) throw new BinSkipped(`${add.path}: a value it cannot write back`);
        row[c.name] = cell;
      }
      await splitter.add(row);
    }
  }
  await splitter.close();
  return written;
}

/** The commit of one bin (PROTOCOL.md "Add File and Remove File": a rearrangement has `dataChange: false`). */
export function optimizeCommit(
  bin: readonly AddAction[],
  written: readonly DataFile[],
  now: number,
  targetFileBytes: number,
): string {
  const actions: DeltaAction[] = [
    {
      commitInfo: {
        timestamp: now,
        operation: 'OPTIMIZE',
        operationParameters: { targetSize: String(targetFileBytes) },
        isBlindAppend: false,
        engineInfo: 'inlet-bronze-optimize',
        operationMetrics: {
          numRemovedFiles: String(bin.length),
          numAddedFiles: String(written.length),
          numRemovedBytes: String(bin.reduce((sum, a) => sum + a.size, 0)),
          numAddedBytes: String(written.reduce((sum, f) => sum + f.bytes.byteLength, 0)),
        },
      },
    },
  ];
  // The fields a checkpoint keeps of a tombstone (`extendedFileMetadata`, `size`... are optional and ours
  // would not survive one); `deletionTimestamp` is what vacuum's retention counts from.
  for (const add of bin)
    actions.push({ remove: { path: add.path, deletionTimestamp: now, dataChange: false } });
  for (const file of written)
    actions.push({
      add: {
        // The key as a URI (PROTOCOL.md "Add File": a partition directory's escapes are escaped again).
        path: addPathOf(file.path),
        partitionValues: { ...file.partitionValues },
        size: file.bytes.byteLength,
        modificationTime: now,
        dataChange: false,
        stats: file.stats,
        tags: { [RESCUED_ROWS_TAG]: String(file.rescued) },
      },
    });
  return serializeActions(actions);
}

/**
 * O4: the bin's commit at the next free version, every version before it read. `conflict`: a version since
 * the snapshot added or removed one of the bin's files; `metadata`: one changed the schema or protocol.
 */
async function commitBin(
  deps: OptimizeDeps,
  table: string,
  seen: Seen,
  bin: readonly AddAction[],
  body: string,
): Promise<'committed' | 'conflict' | 'metadata'> {
  const inputs = bin.map((a) => a.path);
  const log = new LogPut(deps, `bronze table ${table}: optimize`);
  for (let foreign = 0; foreign <= MAX_FOREIGN; ) {
    if (inputs.some((p) => seen.touched.has(p))) return 'conflict';
    const version = seen.version + 1;
    const put = await log.put(version, body);
    if (put.kind === 'again') continue;
    seen.version = version;
    if (put.kind === 'created' || put.text === body) return 'committed';
    const found = put.text;
    for (const action of parseActions({ table, version }, found)) {
      if ('metaData' in action || 'protocol' in action) return 'metadata';
      if ('add' in action) seen.touched.add(action.add.path);
      if ('remove' in action) seen.touched.add(action.remove.path);
    }
    foreign += 1;
  }
  throw new InletError(`bronze table ${table}: more than ${MAX_FOREIGN} other commits while optimizing`, {
    retryable: true,
  });
}

import type { SQSEvent } from 'aws-lambda';
import { parquetReadObjects } from 'hyparquet';
import { bytesObject } from '../../../shared/bronze/checkpoint.ts';
import type { BronzeConfig } from '../../../shared/bronze/config.ts';
import { commitAtNextVersion } from '../../../shared/bronze/delta-commit.ts';
import { buildCommit } from '../../../shared/bronze/delta-log.ts';
import { dataFileKeyOf } from '../../../shared/bronze/partition-paths.ts';
import type {
  DeltaStore,
  LogFileStream,
  RandomAccessObject,
  ReadIdentity,
  SinkCursor,
  SinkCursorStore,
  SourceObjects,
  SourceRead,
} from '../../../shared/bronze/ports.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { headSchema, loadHead } from '../../../shared/bronze/table-head.ts';
import { DEFAULT_PART_LIMITS, writePart } from '../../../shared/bronze/write-version.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { buildManifest } from '../../../shared/ingestion/manifest.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import type { PutIfAbsentResult } from '../../../shared/kernel/put-if-absent.ts';

/**
 * Landing keys in memory, each write with its own ETag like S3's: the first write of a key has ETag `e`
 * (what `manifestOf` lists), every later `set` of it a new one, so a rewrite is another write.
 */
export class LandingObjects extends Map<string, string | Uint8Array> {
  readonly eTags = new Map<string, string>();
  private writes = 0;
  override set(key: string, body: string | Uint8Array): this {
    // Map's constructor calls set before the fields exist.
    if (this.eTags) this.eTags.set(key, this.eTags.has(key) ? `e${++this.writes}` : 'e');
    return super.set(key, body);
  }
}

/** Landing objects in memory, served in small chunks so readers see records split across chunks. */
export class MemorySources implements SourceObjects {
  readonly objects = new LandingObjects();
  /** Bytes fetched by ranged reads, to check a Parquet file is not read whole. */
  rangeBytes = 0;
  opened = 0;
  constructor(private readonly chunk = 7) {}

  /** The write a read finds, as S3SourceObjects reads it: `write` only the manifest's ETag. */
  private read(ref: ObjectRef, identity: ReadIdentity): SourceRead<Uint8Array> {
    const body = this.objects.get(ref.key);
    if (body === undefined) return { kind: 'missing', reason: 'deleted', detail: 'NoSuchKey' };
    const eTag = this.objects.eTags.get(ref.key) ?? 'e';
    if (identity === 'write' && ref.eTag !== null && ref.eTag !== eTag)
      return { kind: 'missing', reason: 'overwritten', detail: 'PreconditionFailed' };
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    return { kind: 'found', body: bytes, pinned: { ...ref, eTag }, asNamed: eTag === ref.eTag };
  }

  async open(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<AsyncIterable<Uint8Array>>> {
    const read = this.read(ref, identity);
    if (read.kind === 'missing') return read;
    this.opened += 1;
    const bytes = read.body;
    const size = this.chunk;
    return {
      ...read,
      body: (async function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
      })(),
    };
  }

  async openRandom(ref: ObjectRef, identity: ReadIdentity): Promise<SourceRead<RandomAccessObject>> {
    const read = this.read(ref, identity);
    if (read.kind === 'missing') return read;
    const bytes = read.body;
    return {
      ...read,
      body: {
        byteLength: bytes.byteLength,
        slice: async (start, end = bytes.byteLength) => {
          this.rangeBytes += end - start;
          return bytes.slice(start, end).buffer as ArrayBuffer;
        },
      },
    };
  }
}

/** A Delta table root in memory; `failNext` makes the next matching call throw, like a crash there. */
export class MemoryDelta implements DeltaStore {
  readonly files = new Map<string, Uint8Array>();
  readonly commits = new Map<number, string>();
  readonly logFiles = new Map<string, Uint8Array>();
  dataWrites = 0;
  commitReads = 0;
  failNext: 'data' | 'commit' | undefined;
  async putDataFile(path: string, bytes: Uint8Array): Promise<void> {
    if (this.failNext === 'data') {
      this.failNext = undefined;
      throw new Error('crash before the data file write');
    }
    this.dataWrites += 1;
    this.files.set(path, bytes);
  }
  async putCommitIfAbsent(version: number, body: string): Promise<PutIfAbsentResult> {
    if (this.failNext === 'commit') {
      this.failNext = undefined;
      throw new Error('crash before the commit write');
    }
    if (this.commits.has(version)) return 'exists' as const;
    this.commits.set(version, body);
    return 'created' as const;
  }
  async getCommit(version: number) {
    this.commitReads += 1;
    return this.commits.get(version);
  }
  /** `ListObjectsV2` pages the log listing took (1,000 keys a page), to check it is never listed whole. */
  listedKeys = 0;
  async listCommits(after?: number) {
    const versions = [...this.commits.keys()]
      .sort((a, b) => a - b)
      .filter((v) => after === undefined || v > after);
    this.listedKeys += versions.length;
    return versions;
  }
  async putLogFile(name: string, body: Uint8Array | string) {
    this.logFiles.set(name, typeof body === 'string' ? new TextEncoder().encode(body) : body);
  }
  async getLogFile(name: string) {
    return this.logFiles.get(name);
  }
  async openLogFile(name: string) {
    const bytes = this.logFiles.get(name);
    return bytes && bytesObject(bytes);
  }
  streamLogFile(name: string): LogFileStream {
    const chunks: Uint8Array[] = [];
    return {
      write: async (chunk) => void chunks.push(chunk),
      close: async () => void this.logFiles.set(name, Buffer.concat(chunks)),
      abort: async () => undefined,
    };
  }
}

export class MemoryCursors implements SinkCursorStore {
  readonly items = new Map<string, SinkCursor>();
  async get(table: string): Promise<SinkCursor> {
    return (
      this.items.get(table) ?? {
        table,
        manifestVersion: 0,
        filesDone: 0,
        deltaVersion: -1,
        rows: 0,
        rescued: 0,
      }
    );
  }
  async advance(from: SinkCursor, to: SinkCursor): Promise<boolean> {
    if ((this.items.get(from.table)?.deltaVersion ?? -1) !== from.deltaVersion) return false;
    this.items.set(to.table, to);
    return true;
  }
  readonly cleaned = new Map<string, number>();
  async getCleaned(table: string): Promise<number> {
    return this.cleaned.get(table) ?? 0;
  }
  async advanceCleaned(table: string, from: number, to: number): Promise<boolean> {
    if ((this.cleaned.get(table) ?? 0) !== from) return false;
    this.cleaned.set(table, to);
    return true;
  }
}

export function manifestOf(table: string, version: number, keys: readonly string[]): Manifest {
  return buildManifest(
    {
      table,
      batchId: `B${version}`,
      files: keys.map((key) => ({
        bucket: 'landing',
        key,
        size: 1,
        eTag: 'e',
        versionId: null,
        sequencer: null,
        eventTime: '2026-11-30T00:00:00.000Z',
      })),
    },
    version,
    `2026-11-30T00:00:0${version % 10}.000Z`,
  );
}

/** The sink's FIFO queue handing the handler these bodies, in order; ids `m0`, `m1`, ... unless given. */
export function sinkEvent(bodies: readonly string[], ids: readonly string[] = []): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: ids[i] ?? `m${i}`,
      receiptHandle: `r${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'x',
        ApproximateFirstReceiveTimestamp: '0',
        MessageGroupId: 't',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:sink.fifo',
      awsRegion: 'us-east-1',
    })),
  };
}

/**
 * One manifest version as one Delta commit at the table's next version, the way the sink writes a version
 * that fits one part. `schema` stands for a table that already has that schema: a first commit (version 0,
 * the previous manifest version) sets it, so the version written is Delta version 1. Data files are named
 * with the attempt id `attempt` (default `a`).
 */
export async function writeVersion(
  deps: { readonly sources: SourceObjects; readonly delta: DeltaStore },
  input: {
    readonly table: string;
    readonly location: string;
    readonly config: BronzeConfig;
    readonly manifest: Manifest;
    readonly schema: TableSchema | undefined;
    readonly rowGroupRows?: number;
    readonly attempt?: string;
  },
) {
  const { table, location, manifest } = input;
  if (input.schema && (await deps.delta.listCommits()).length === 0) {
    const seed = manifestOf(table, manifest.version - 1, []);
    const body = buildCommit({
      table,
      location,
      manifestVersion: seed.version,
      batchIds: seed.batchIds,
      sourceFiles: { from: 0, to: 0, of: 0 },
      previous: undefined,
      schema: input.schema,
      schemaChanged: true,
      files: [],
      missingSources: [],
      timestamp: 0,
    });
    await deps.delta.putCommitIfAbsent(0, body);
  }
  const head = await loadHead(deps.delta, table, Number.POSITIVE_INFINITY);
  const prepared = await writePart(
    { ...deps, now: () => 0 },
    {
      table,
      location,
      config: input.config,
      manifest,
      files: { from: 0, to: manifest.files.length },
      head,
      attempt: input.attempt ?? 'a',
      limits: DEFAULT_PART_LIMITS,
      finishBy: Number.POSITIVE_INFINITY,
      rowGroupRows: input.rowGroupRows,
    },
  );
  const outcome = await commitAtNextVersion(
    { ...systemClock, delta: deps.delta },
    head,
    table,
    prepared.body,
    {
      manifestVersion: manifest.version - 1,
      filesDone: 0,
    },
  );
  if (outcome.kind !== 'committed') throw new Error(`the version was not committed: ${outcome.kind}`);
  return {
    deltaVersion: outcome.version,
    schema: headSchema(head) ?? [],
    rows: prepared.rows,
    rescued: prepared.rescued,
    files: prepared.dataFiles,
    bytes: prepared.bytes,
    missing: prepared.missing,
  };
}

/**
 * The rows of the table's live files at its latest version, as hyparquet reads them. Each file must be the
 * one its `add` names: there, and `add.size` bytes long (a reader checks the footer against it).
 */
export async function liveRows(delta: MemoryDelta): Promise<Record<string, unknown>[]> {
  const { state } = await loadSnapshot(delta);
  const rows: Record<string, unknown>[] = [];
  for (const add of state.adds.values()) {
    // The log names a file by its key as a URI (PROTOCOL.md "Add File"): a partition directory is escaped.
    const bytes = delta.files.get(dataFileKeyOf(add.path));
    if (!bytes) throw new Error(`the log names ${add.path}, which was never written`);
    if (bytes.byteLength !== add.size)
      throw new Error(`${add.path} is ${bytes.byteLength} bytes, not the ${add.size} its add names`);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    rows.push(...((await parquetReadObjects({ file })) as Record<string, unknown>[]));
  }
  return rows;
}

import type { SQSEvent } from 'aws-lambda';
import type {
  DeltaStore,
  RandomAccessObject,
  ReadIdentity,
  SinkCursor,
  SinkCursorStore,
  SourceObjects,
  SourceRead,
} from '../../shared/bronze/ports.ts';
import type { Manifest } from '../../shared/manifest.ts';
import { buildManifest } from '../../shared/manifest.ts';
import type { ObjectRef } from '../../shared/model.ts';

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
  async putCommitIfAbsent(version: number, body: string) {
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
  async listCommits() {
    return [...this.commits.keys()].sort((a, b) => a - b);
  }
  async putLogFile(name: string, body: Uint8Array | string) {
    this.logFiles.set(name, typeof body === 'string' ? new TextEncoder().encode(body) : body);
  }
  async getLogFile(name: string) {
    return this.logFiles.get(name);
  }
}

export class MemoryCursors implements SinkCursorStore {
  readonly items = new Map<string, SinkCursor>();
  async get(table: string): Promise<SinkCursor> {
    return this.items.get(table) ?? { table, deltaVersion: -1, rows: 0, rescued: 0 };
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

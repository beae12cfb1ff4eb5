import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./engines.py', import.meta.url));

/** The two readers: the reference implementation (Spark + Delta Lake) and delta-rs. */
export const ENGINES = ['spark', 'delta-rs'] as const;
export type Engine = (typeof ENGINES)[number];

/** `[name, Delta type, nullable]`, the type printed as `long`, `decimal(10,2)`, `struct<a:long>`... */
export type SchemaField = [string, string, boolean];
/** One row as engines.py canonicalises it: longs as decimal strings, timestamps ISO with microseconds. */
export type EngineRow = Record<string, unknown>;

export interface TableRead {
  readonly version: number;
  readonly schema: SchemaField[];
  readonly rows: EngineRow[];
  /** Spark only: `count()`, which Delta answers from the files' `stats.numRecords`. */
  readonly count?: number;
}

export interface HistoryEntry {
  readonly version: number;
  readonly operation: string;
  readonly operationParameters: Record<string, string>;
  readonly numOutputRows: string | null;
  readonly engineInfo: string | null;
}

/** An engine refused the request (an exception in engines.py); the message is the engine's own. */
export class EngineRefusedError extends Error {
  constructor(
    readonly request: string,
    message: string,
    readonly trace: string,
  ) {
    super(`${request}: ${message}`);
    this.name = 'EngineRefusedError';
  }
}

type Reply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string; trace: string };

/**
 * engines.py as one long-lived process: the JVM starts once for the whole suite and every table is read
 * through it. Requests are JSON lines on its stdin; answers come on file descriptor 3, because the JVM
 * writes its own output to the stdout and stderr it shares with Python (both go to `logFile`).
 */
/** What a filtered read scanned: `files` of `of`; Spark also says how many rows it returned. */
export interface Skipping {
  readonly files: number;
  readonly of: number;
  readonly rows?: number;
}

export class EngineServer {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void; what: string }
  >();
  private exit: Error | undefined;

  private constructor(private readonly child: ChildProcess) {
    const answers = child.stdio[3];
    if (!answers || !('on' in answers)) throw new Error('engines.py has no answer pipe');
    createInterface({ input: answers as NodeJS.ReadableStream }).on('line', (line) => this.onReply(line));
    child.once('exit', (code, signal) => {
      this.exit = new Error(`engines.py exited (${signal ?? `code ${code}`}); see its log`);
      for (const p of this.pending.values()) p.reject(this.exit);
      this.pending.clear();
    });
  }

  static start(options: {
    readonly python: string;
    readonly endpoint: string;
    readonly region: string;
    readonly jars: readonly string[];
    /** Spark's scratch space (warehouse, spills, stream checkpoints) and the log file. */
    readonly scratch: string;
  }): EngineServer {
    mkdirSync(options.scratch, { recursive: true });
    const log = openSync(join(options.scratch, 'engines.log'), 'w');
    const child = spawn(
      options.python,
      [script, options.endpoint, options.region, options.jars.join(','), options.scratch],
      {
        stdio: ['pipe', log, log, 'pipe'],
        // Spark binds and advertises loopback only; timestamps are read in UTC whatever the machine's zone.
        env: { ...process.env, SPARK_LOCAL_IP: '127.0.0.1', TZ: 'UTC', PYTHONUNBUFFERED: '1' },
      },
    );
    return new EngineServer(child);
  }

  private onReply(line: string): void {
    const reply = JSON.parse(line) as Reply;
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(new EngineRefusedError(waiting.what, reply.error, reply.trace));
  }

  private request<T>(what: string, body: Record<string, unknown>): Promise<T> {
    if (this.exit) return Promise.reject(this.exit);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, what });
      this.child.stdin?.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  /** Starts the JVM (SparkSession) now, so it boots while the first tables are written. */
  startSpark(): Promise<{ spark: string }> {
    return this.request('start Spark', { op: 'start' });
  }

  /** A batch read of the latest version, or of `version` (time travel). */
  read(engine: Engine, uri: string, version?: number): Promise<TableRead> {
    const what = `${engine} read of ${uri}${version === undefined ? '' : ` at version ${version}`}`;
    return this.request(what, { op: 'read', engine, uri, version: version ?? null });
  }

  /** `DESCRIBE HISTORY` (Spark) or `DeltaTable.history()` (delta-rs), newest first; the newest `limit` if given. */
  history(engine: Engine, uri: string, limit?: number): Promise<HistoryEntry[]> {
    return this.request(`${engine} history of ${uri}`, { op: 'history', engine, uri, limit: limit ?? null });
  }

  /** The latest `txn` version of `appId`, as delta-rs reads it (what an idempotent writer resumes from). */
  txnVersion(uri: string, appId: string): Promise<number | null> {
    return this.request(`delta-rs txn of ${uri}`, { op: 'txn', uri, appId });
  }

  /**
   * Files a read filtered by `predicate` (SQL both engines parse) scans, of all the table's files: Spark's
   * scan metric `numFiles` (with the rows it returned), delta-rs's `file_uris(file_pruning_predicate)`.
   */
  skipping(engine: Engine, uri: string, predicate: string): Promise<Skipping> {
    return this.request(`${engine} files of ${uri} where ${predicate}`, {
      op: 'skipping',
      engine,
      uri,
      predicate,
    });
  }

  /** Spark's `GENERATE symlink_format_manifest FOR TABLE`: Delta's own manifests, written over the table's. */
  generateSymlinkManifest(uri: string): Promise<null> {
    return this.request(`spark GENERATE symlink_format_manifest of ${uri}`, { op: 'symlink', uri });
  }

  /** Live files at the latest version: Spark's `DESCRIBE DETAIL` `numFiles`, delta-rs's `get_add_actions()` count. */
  liveFiles(engine: Engine, uri: string): Promise<number> {
    return this.request(`${engine} live files of ${uri}`, { op: 'files', engine, uri });
  }

  /** delta-rs's `get_add_actions(flatten=True)`: each file's stats as delta-rs parses them, values as text. */
  fileStats(uri: string): Promise<Array<Record<string, string | null>>> {
    return this.request(`delta-rs stats of ${uri}`, { op: 'stats', uri });
  }

  /** One Spark Structured Streaming run with `trigger(availableNow=True)`: the rows it read. */
  stream(
    uri: string,
    checkpoint: string,
    startingVersion?: number,
  ): Promise<{ schema: SchemaField[]; rows: EngineRow[] }> {
    return this.request(`Spark stream of ${uri}`, {
      op: 'stream',
      uri,
      checkpoint,
      startingVersion: startingVersion ?? null,
    });
  }

  /** Closes stdin: engines.py stops Spark and exits. */
  async close(): Promise<void> {
    if (this.exit) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

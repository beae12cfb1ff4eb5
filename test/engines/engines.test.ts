/**
 * `npm run test:engines`: every bronze table shape (shapes.ts), written by the real sink on the emulator,
 * read by the reference implementation, Apache Spark 4.0 + Delta Lake 4.0 over s3a://, and by delta-rs:
 * the latest version and each version by time travel, a streaming read with `availableNow` (resumed across
 * a version), the history, and a read through the newest checkpoint with the commits before it removed.
 * Both engines must return exactly the rows and schema the test wrote, and so the same as each other.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsClients, destroyClients } from '../../local/aws/clients.ts';
import { ensureEngineJars } from '../../local/engine-jars.ts';
import { enginesCacheDir, venvPython } from '../../local/paths.ts';
import { sinkAppId } from '../../shared/bronze/delta-log.ts';
import { testClients, testTarget } from '../support/aws.ts';
import { diffEngines, diffRows, diffSchema } from './compare.ts';
import {
  ENGINES,
  type Engine,
  EngineRefusedError,
  type EngineRow,
  EngineServer,
  type SchemaField,
  type TableRead,
} from './engine-server.ts';
import { describeOptimizedTables } from './optimized-tables.ts';
import { bronzeOf, expectedRows, type LogEntry, rowsOf, type Shape } from './shape.ts';
import { SHAPES } from './shapes.ts';
import { copyWithoutLogBefore, type WrittenTable, writeShape } from './write-table.ts';

const scratch = join(enginesCacheDir, 'run');
let server: EngineServer;
let clients: AwsClients;

beforeAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  clients = testClients();
  const target = emulator();
  server = EngineServer.start({
    python: venvPython,
    endpoint: target.endpoint,
    region: target.region,
    jars: ensureEngineJars(),
    scratch,
  });
  // The JVM boots while the first table is written; a failure to start shows on the first Spark read.
  server.startSpark().catch(() => {});
});

afterAll(async () => {
  await server?.close();
  if (clients) destroyClients(clients);
});

function emulator() {
  const target = testTarget();
  if (target.kind !== 'emulator') throw new Error('test:engines reads the tables from the emulator');
  return target;
}

/**
 * Whether the sink checkpoints the shape's table: at least `checkpointInterval` commits (one a version, or
 * more with parts and other writers; the test reads which version `_last_checkpoint` names).
 */
function checkpoints(shape: Shape): boolean {
  const bronze = bronzeOf(shape);
  return shape.versions.length - 1 >= (bronze.checkpointInterval ?? 100);
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each(SHAPES.map((shape) => [shape.name, shape] as const))('%s', (name, shape) => {
  const lastIndex = shape.versions.length - 1;
  const at = (engine: string, what: string) => `[${name}] ${engine} ${what}`;
  let table: WrittenTable;
  /** The table's last Delta version, and the one the first stream stopped at. */
  let last = -1;
  let snapshotAt = -1;
  const streams: { snapshot?: Settled; resumed?: Settled; fromVersion0?: Settled } = {};
  const reads = new Map<string, Promise<TableRead>>();
  /** Each read once: the per-engine tests and the engines' comparison share them. */
  const read = (engine: Engine, uri: string, version?: number) => {
    const key = `${engine} ${uri} ${version}`;
    const cached = reads.get(key) ?? server.read(engine, uri, version);
    reads.set(key, cached);
    return cached;
  };
  const sourceFile = (key: string) => table.sourceFile(key);
  const expected = (from: number, to: number) =>
    expectedRows(shape, table.log, from, to, sourceFile, (index) => table.ingestDate(index));

  beforeAll(async () => {
    const checkpointDir = join(scratch, 'streams', name);
    table = await writeShape(shape, clients, emulator(), async (t, index) => {
      if (index !== lastIndex - 1) return;
      snapshotAt = t.log.length - 1;
      streams.snapshot = await settle(server.stream(t.uri, checkpointDir));
    });
    last = table.log.length - 1;
    // A stream Spark refuses fails the streaming test only: the batch reads still say what they see.
    if (lastIndex >= 1) streams.resumed = await settle(server.stream(table.uri, checkpointDir));
    else streams.snapshot = await settle(server.stream(table.uri, checkpointDir));
    streams.fromVersion0 = await settle(server.stream(table.uri, join(scratch, 'streams', `${name}-0`), 0));
  }, 900_000);

  /** The error `engine` must refuse Delta version `v` with (shape.ts `refused`), or undefined when it reads it. */
  const refusal = (engine: Engine, v: number) => {
    const deltaRs = shape.refused?.deltaRs;
    return engine === 'delta-rs' && deltaRs && v >= deltaRs.fromVersion ? deltaRs.error : undefined;
  };
  /** Why a read that must be refused was not, or was refused otherwise; empty when refused as it must be. */
  const refusedLines = async (label: string, reading: Promise<unknown>, error: RegExp) =>
    reading.then(
      () => [`${label}: read, yet it must be refused with ${error}`],
      (e: unknown) =>
        e instanceof EngineRefusedError && error.test(e.message)
          ? []
          : [`${label}: ${String(e)}, expected ${error}`],
    );

  /**
   * What reading Delta version `v` (undefined: the latest, which must be `last`) gives against what was
   * written, or, where the shape says `engine` refuses it, whether it refused it as it must.
   */
  const readLines = async (
    label: string,
    engine: Engine,
    reading: Promise<TableRead>,
    v: number | undefined,
  ): Promise<string[]> => {
    const refused = refusal(engine, v ?? last);
    if (refused) return refusedLines(label, reading, refused);
    const got = await reading;
    const lines = checkRead(label, got, expected(0, v ?? last));
    if (v === undefined && got.version !== last)
      lines.push(`${label}: version ${got.version}, expected ${last}`);
    return lines;
  };

  it.each(ENGINES)(
    '%s reads the latest version and every version by time travel, as written',
    async (engine) => {
      const lines = await readLines(at(engine, 'latest'), engine, read(engine, table.uri), undefined);
      for (const v of range(0, last))
        lines.push(...(await readLines(at(engine, `version ${v}`), engine, read(engine, table.uri, v), v)));
      expect(lines).toEqual([]);
    },
  );

  it('Spark and delta-rs read the same schema and values at every version', async () => {
    const lines: string[] = [];
    for (const v of [undefined, ...range(0, last)]) {
      if (ENGINES.some((engine) => refusal(engine, v ?? last))) continue;
      const [spark, deltaRs] = await Promise.all(ENGINES.map((engine) => read(engine, table.uri, v)));
      if (!spark || !deltaRs) throw new Error('both engines read');
      lines.push(
        ...diffEngines(
          `[${name}] ${v === undefined ? 'latest' : `version ${v}`}`,
          { name: 'spark', ...spark },
          { name: 'delta-rs', ...deltaRs },
        ),
      );
    }
    expect(lines).toEqual([]);
  });

  it('Spark streams it with availableNow: the table, then only the next version when resumed, and every commit from version 0', () => {
    const lines: string[] = [];
    const check = (what: string, got: Settled | undefined, from: number, to: number) => {
      if (!got) throw new Error(`${what} did not run`);
      if ('error' in got) lines.push(`${at('spark', what)}: ${String(got.error)}`);
      else lines.push(...checkRead(at('spark', what), got.read, expected(from, to)));
    };
    // A shape whose streams cross a type change: the resumed stream and the one from version 0 must stop.
    const stops = shape.refused?.sparkStream;
    const stopped = (what: string, got: Settled | undefined) => {
      if (!got) throw new Error(`${what} did not run`);
      if (!('error' in got))
        lines.push(`${at('spark', what)}: read ${got.read.rows.length} rows, yet it must stop at ${stops}`);
      else if (!stops?.test(String(got.error)))
        lines.push(`${at('spark', what)}: ${String(got.error)}, expected ${stops}`);
    };
    if (lastIndex >= 1) {
      check('stream (snapshot at the version before the last)', streams.snapshot, 0, snapshotAt);
      if (stops) stopped('stream resumed from its checkpoint', streams.resumed);
      else check('stream resumed from its checkpoint', streams.resumed, snapshotAt + 1, last);
    } else {
      check('stream (snapshot)', streams.snapshot, 0, last);
    }
    if (stops) stopped('stream from startingVersion 0', streams.fromVersion0);
    else check('stream from startingVersion 0', streams.fromVersion0, 0, last);
    expect(lines).toEqual([]);
  });

  it('DESCRIBE HISTORY (and delta-rs history) lists every version as the sink wrote it', async () => {
    const want = historyOf(shape, table.log, 0, last);
    for (const engine of ENGINES)
      expect(await server.history(engine, table.uri), at(engine, 'history')).toEqual(want);
    expect(await server.txnVersion(table.uri, sinkAppId('events')), at('delta-rs', 'txn')).toBe(
      lastIndex + 1,
    );
  });

  if (shape.skipping)
    it("skips files by the add actions' stats, in the JSON log and through the checkpoint", async () => {
      const lines = await skippingLines(shape, table.uri, 'from the JSON log');
      const stats = (await server.fileStats(table.uri)).sort((a, b) =>
        String(a.path).localeCompare(String(b.path)),
      );
      (shape.addStats ?? []).forEach((want, i) => {
        const got = stats[i] ?? {};
        const differ = Object.keys(want).filter((k) => got[k] !== want[k]);
        if (differ.length > 0)
          lines.push(
            `[${shape.name}] delta-rs stats of file ${i}: ${differ.map((k) => `${k} ${JSON.stringify(got[k])}, expected ${JSON.stringify(want[k])}`).join('; ')}`,
          );
      });
      if (checkpoints(shape)) {
        const checkpoint = (await table.lastCheckpoint()) ?? 0;
        const uri = await copyWithoutLogBefore(table, checkpoint);
        lines.push(...(await skippingLines(shape, uri, `from the checkpoint at ${checkpoint}`)));
      }
      expect(lines).toEqual([]);
    });

  if (checkpoints(shape))
    it('reads through its newest checkpoint with the log before it removed, and refuses the versions before it', async () => {
      const checkpoint = (await table.lastCheckpoint()) ?? 0;
      expect(checkpoint, 'the sink wrote a checkpoint').toBeGreaterThan(0);
      const uri = await copyWithoutLogBefore(table, checkpoint);
      const lines: string[] = [];
      for (const engine of ENGINES) {
        const what = (v: string) => at(engine, `without the log before ${checkpoint}, ${v}`);
        lines.push(...(await readLines(what('latest'), engine, server.read(engine, uri), undefined)));
        for (const v of range(checkpoint, last))
          lines.push(...(await readLines(what(`version ${v}`), engine, server.read(engine, uri, v), v)));
        const older = await server.read(engine, uri, checkpoint - 1).then(
          (r) => `read ${r.rows.length} rows`,
          (e: unknown) => (e instanceof EngineRefusedError ? undefined : String(e)),
        );
        if (older)
          lines.push(`${what(`version ${checkpoint - 1}`)}: its commit is gone, yet the engine ${older}`);
        expect(await server.history(engine, uri), what('history')).toEqual(
          historyOf(shape, table.log, checkpoint, last),
        );
      }
      expect(await server.txnVersion(uri, sinkAppId('events')), 'delta-rs txn after the checkpoint').toBe(
        lastIndex + 1,
      );
      expect(lines).toEqual([]);
    });

  // Last: Spark's GENERATE writes its manifests over the sink's.
  if (bronzeOf(shape).symlinkManifest)
    it("its symlink manifests list exactly the files Spark's GENERATE symlink_format_manifest lists", async () => {
      const ours = await table.symlinkManifests();
      expect(Object.keys(ours).length, 'the sink wrote manifests').toBeGreaterThan(0);
      await server.generateSymlinkManifest(table.uri);
      expect(ours).toEqual(await table.symlinkManifests());
    });
});

// Tables of many small versions, optimized and vacuumed by Inlet, then read (optimized-tables.ts).
describeOptimizedTables(() => ({ server, clients }));

/** Each of the shape's filtered reads by every engine on `uri`: the files it scanned and the rows it returned. */
async function skippingLines(shape: Shape, uri: string, label: string): Promise<string[]> {
  const lines: string[] = [];
  for (const q of shape.skipping ?? [])
    for (const engine of q.engines ?? ENGINES) {
      const got = await server.skipping(engine, uri, q.predicate);
      const want = {
        files: q.files,
        of: shape.files ?? shape.versions.length,
        ...(engine === 'spark' ? { rows: q.rows } : {}),
      };
      if (JSON.stringify(got) !== JSON.stringify(want))
        lines.push(
          `[${shape.name}] ${engine} ${label} where ${q.predicate}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
        );
    }
  return lines;
}

type Streamed = { readonly schema: SchemaField[]; readonly rows: EngineRow[] };
type Settled = { readonly read: Streamed } | { readonly error: unknown };

const settle = (stream: Promise<Streamed>): Promise<Settled> =>
  stream.then(
    (read) => ({ read }),
    (error: unknown) => ({ error }),
  );

function checkRead(label: string, got: Streamed & { count?: number }, want: ReturnType<typeof expectedRows>) {
  const lines = [
    ...diffSchema(label, want.columns, got.schema, want.generated),
    ...diffRows(label, want, got.rows),
  ];
  if (got.count !== undefined && got.count !== want.rows.length)
    lines.push(`${label}: count() ${got.count}, ${want.rows.length} rows written`);
  return lines;
}

/** What both engines' history must say of Delta versions `from`..`to`, newest first. */
function historyOf(shape: Shape, log: readonly LogEntry[], from: number, to: number) {
  return range(from, to)
    .reverse()
    .map((version) => {
      const entry = log[version];
      if (!entry) throw new Error(`no Delta version ${version}`);
      if (entry.kind === 'other')
        return {
          version,
          operation: entry.operation,
          operationParameters: entry.operationParameters,
          numOutputRows: null,
          engineInfo: entry.engineInfo,
        };
      return {
        version,
        operation: 'WRITE',
        operationParameters: { mode: 'Append' },
        numOutputRows: String(rowsOf(shape, entry)),
        engineInfo: 'inlet-bronze-sink',
      };
    });
}

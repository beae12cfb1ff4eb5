import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { logKey } from '../../../shared/bronze/delta-log.ts';
import { optimizeTable, planBins } from '../../../shared/bronze/optimize.ts';
import { parquetRecords } from '../../../shared/bronze/parquet-records.ts';
import type { DeltaStore } from '../../../shared/bronze/ports.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { UnknownOutcomeError } from '../../../shared/kernel/errors.ts';
import { liveRows, MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { memoryTableFiles } from './table-files.ts';

const TABLE = 't';

/** A bronze table of `versions` manifest versions, one small landing file each, in `format`. */
async function smallFiles(
  versions: number,
  body: (v: number) => string | Uint8Array,
  format: 'jsonl' | 'parquet' = 'jsonl',
) {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const config = bronzeConfigSchema.parse({ format });
  let schema: TableSchema | undefined;
  for (let v = 1; v <= versions; v++) {
    const key = `f${v}.${format}`;
    sources.objects.set(key, body(v));
    const result = await writeVersion(
      { sources, delta },
      { table: TABLE, location: 's3://b/p', config, manifest: manifestOf(TABLE, v, [key]), schema },
    );
    schema = result.schema;
  }
  return delta;
}

/**
 * The exact cells of every live file (timestamps in microseconds, decimals unscaled), in a comparable form:
 * a column a file lacks is null to every reader (its rows predate the column), so nulls are left out.
 */
async function liveCells(delta: MemoryDelta): Promise<string[]> {
  const { state } = await loadSnapshot(delta);
  const files = memoryTableFiles(delta);
  const out: string[] = [];
  for (const add of state.adds.values())
    for await (const r of parquetRecords(await files.open(add.path)))
      if (r.kind === 'row')
        out.push(
          JSON.stringify(
            Object.fromEntries(Object.entries(r.values).filter(([, v]) => v !== null)),
            (_k, v) => (typeof v === 'bigint' ? `${v}n` : v),
          ),
        );
  return out.sort();
}

let ids = 0;
const deps = (delta: DeltaStore & { files?: unknown }, memory: MemoryDelta) => ({
  ...systemClock,
  sleep: async () => undefined,
  delta,
  files: memoryTableFiles(memory),
  newId: () => `id${++ids}`,
});

const jsonBody = (v: number) =>
  [
    JSON.stringify({ id: v, name: `n${v}`, price: v / 4, ok: v % 2 === 0 }),
    // a value that does not fit (rescued), and from version 5 on a new column
    JSON.stringify({ id: `x${v}`, ...(v >= 5 ? { extra: 'é€😀' } : {}) }),
    'not json',
  ].join('\n');

const options = { table: TABLE, targetFileBytes: 1 << 20, finishBy: Number.POSITIVE_INFINITY };

describe('optimize', () => {
  it('rewrites many small files as one, every row and value the same, with dataChange false and stats', async () => {
    const delta = await smallFiles(30, jsonBody);
    const before = await liveCells(delta);
    const rowsBefore = (await liveRows(delta)).length;
    const { state: old } = await loadSnapshot(delta);
    expect(old.adds.size).toBe(30);

    const result = await optimizeTable(deps(delta, delta), options);

    expect(result).toMatchObject({ commits: 1, filesRemoved: 30, filesAdded: 1, binsSkipped: 0 });
    const { state } = await loadSnapshot(delta);
    expect(state.adds.size).toBe(1);
    expect(await liveCells(delta)).toEqual(before);
    expect((await liveRows(delta)).length).toBe(rowsBefore);
    const actions = (delta.commits.get(state.version) ?? '')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const adds = actions.filter((a) => a.add).map((a) => a.add);
    const removes = actions.filter((a) => a.remove).map((a) => a.remove);
    expect(removes.map((r) => r.path).sort()).toEqual([...old.adds.keys()].sort());
    expect(removes.every((r) => r.dataChange === false && typeof r.deletionTimestamp === 'number')).toBe(
      true,
    );
    expect(adds).toHaveLength(1);
    expect(adds[0].dataChange).toBe(false);
    const stats = JSON.parse(adds[0].stats);
    expect(stats.numRecords).toBe(90);
    expect(stats.minValues._manifest_version).toBe(1);
    expect(stats.maxValues._manifest_version).toBe(30);
    expect(stats.nullCount.extra).toBe(90 - 26);
    // Rescued rows are still counted: the line that is not JSON, in every file.
    const rescuedBefore = [...old.adds.values()].reduce(
      (n, a) => n + Number(a.tags?.['inlet.rescuedRows']),
      0,
    );
    expect(rescuedBefore).toBe(30);
    expect(adds[0].tags['inlet.rescuedRows']).toBe('30');
    expect(actions[0].commitInfo.operation).toBe('OPTIMIZE');
  });

  it('keeps the exact values of typed Parquet columns (long past 2^53, NaN and -0, instants in microseconds)', async () => {
    const delta = await smallFiles(
      6,
      (v) =>
        new Uint8Array(
          parquetWriteBuffer({
            columnData: [
              { name: 'id', data: [2n ** 60n + BigInt(v), null], type: 'INT64' },
              { name: 'x', data: [v === 1 ? Number.NaN : -0, 1e-300], type: 'DOUBLE' },
              { name: 's', data: ['a\u0000b', null], type: 'STRING' },
              { name: 'i', data: [v, -v], type: 'INT32' },
              { name: 'at', data: [new Date(Date.UTC(2026, 0, v)), null], type: 'TIMESTAMP' },
            ],
          }),
        ),
      'parquet',
    );
    const before = await liveCells(delta);
    const result = await optimizeTable(deps(delta, delta), options);
    expect(result.commits).toBe(1);
    expect(await liveCells(delta)).toEqual(before);
  });

  it('packs into bins of at most the target and leaves big files and lone small files alone', () => {
    const add = (path: string, size: number, modificationTime = 0) => ({
      path,
      size,
      modificationTime,
      partitionValues: {},
      dataChange: true,
    });
    const bins = planBins(
      [add('a', 40), add('b', 40), add('c', 40), add('big', 100), add('d', 30, -1), add('e', 99, 5)],
      100,
    );
    expect(bins.map((b) => b.map((a) => a.path))).toEqual([
      ['d', 'a'],
      ['b', 'c'],
    ]);
  });

  it('steps over the sink appending meanwhile, and its file stays live', async () => {
    const delta = await smallFiles(5, jsonBody);
    const racing = raceOnce(delta, async (version) => {
      // The sink commits the next version first (an append, as the sink's commits are).
      const { state } = await loadSnapshot(delta);
      const path = [...state.adds.keys()][0] as string;
      const add = { ...state.adds.get(path), path: 'appended.parquet', dataChange: true };
      delta.files.set('appended.parquet', delta.files.get(path) as Uint8Array);
      delta.commits.set(version, `${JSON.stringify({ add })}\n`);
    });
    const before = await liveCells(delta);
    const result = await optimizeTable(deps(racing, delta), options);
    expect(result.commits).toBe(1);
    const { state } = await loadSnapshot(delta);
    expect([...state.adds.keys()]).toContain('appended.parquet');
    expect(state.adds.size).toBe(2);
    expect((await liveCells(delta)).length).toBe(before.length + 3);
  });

  it('gives up a bin whose input another writer removed meanwhile (another optimize): no row twice', async () => {
    const delta = await smallFiles(5, jsonBody);
    const before = await liveCells(delta);
    const racing = raceOnce(delta, async (version) => {
      const { state } = await loadSnapshot(delta);
      const [path] = [...state.adds.keys()];
      const add = state.adds.get(path as string);
      const moved = { ...add, path: 'moved.parquet', dataChange: false };
      delta.files.set('moved.parquet', delta.files.get(path as string) as Uint8Array);
      delta.commits.set(
        version,
        `${JSON.stringify({ remove: { path, deletionTimestamp: 1, dataChange: false } })}\n${JSON.stringify({ add: moved })}\n`,
      );
    });
    const result = await optimizeTable(deps(racing, delta), options);
    expect(result).toMatchObject({ commits: 0, binsSkipped: 1 });
    expect(await liveCells(delta)).toEqual(before);
  });

  it('stops when another writer changes the metaData meanwhile', async () => {
    const delta = await smallFiles(4, jsonBody);
    const racing = raceOnce(delta, async (version) => {
      const { state } = await loadSnapshot(delta);
      const metaData = { ...state.metaData, configuration: { 'delta.appendOnly': 'false' } };
      delta.commits.set(version, `${JSON.stringify({ metaData })}\n`);
    });
    const result = await optimizeTable(deps(racing, delta), options);
    expect(result).toMatchObject({ commits: 0, stoppedBy: 'metadata' });
  });

  it('counts a commit whose answer was lost once: the retry finds its own bytes', async () => {
    const delta = await smallFiles(4, jsonBody);
    const before = await liveCells(delta);
    const lost = Object.assign(Object.create(delta) as MemoryDelta, {
      async putCommitIfAbsent(version: number, body: string) {
        await delta.putCommitIfAbsent(version, body);
        throw new UnknownOutcomeError('the answer was lost');
      },
    });
    const result = await optimizeTable(deps(lost, delta), options);
    expect(result.commits).toBe(1);
    expect(await liveCells(delta)).toEqual(before);
    const version = (await loadSnapshot(delta)).state.version;
    expect(delta.commits.get(version)).toContain('OPTIMIZE');
    expect(delta.commits.get(version - 1)).not.toContain('OPTIMIZE');
  });

  it('crashes before its commit leave the table as it was, with orphans only', async () => {
    const delta = await smallFiles(4, jsonBody);
    const before = await liveCells(delta);
    const version = (await loadSnapshot(delta)).state.version;
    delta.failNext = 'commit';
    await expect(optimizeTable(deps(delta, delta), options)).rejects.toThrow(/crash/);
    expect((await loadSnapshot(delta)).state.version).toBe(version);
    expect(await liveCells(delta)).toEqual(before);
    expect([...delta.files.keys()].some((p) => p.startsWith('part-optimize-'))).toBe(true);
    // The next run does it.
    expect((await optimizeTable(deps(delta, delta), options)).commits).toBe(1);
    expect(await liveCells(delta)).toEqual(before);
    expect(delta.commits.get(version + 1)).toContain('OPTIMIZE');
    expect(logKey(version + 1)).toMatch(/\.json$/);
  });

  it('starts no bin after finishBy', async () => {
    const delta = await smallFiles(4, jsonBody);
    const result = await optimizeTable(deps(delta, delta), { ...options, finishBy: 0 });
    expect(result).toMatchObject({ commits: 0, stoppedBy: 'time' });
  });
});

/** The delta store, where another writer takes the version optimize first tries to commit at. */
function raceOnce(delta: MemoryDelta, before: (version: number) => Promise<void>): MemoryDelta {
  let raced = false;
  return Object.assign(Object.create(delta) as MemoryDelta, {
    async putCommitIfAbsent(version: number, body: string) {
      if (!raced) {
        raced = true;
        await before(version);
      }
      return delta.putCommitIfAbsent(version, body);
    },
  });
}

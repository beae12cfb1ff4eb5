// The bronze sink crashed between each pair of its calls (read a landing file, write a data file, read or
// write the Delta log, write a checkpoint, read or advance the cursor), before the call takes effect and after
// it took effect but before its answer arrived. After every crash a clean run must leave the same table:
// rows in the table = rows in the committed versions' files, no duplicate, no missing version.
import { describe, expect, it } from 'vitest';
import { checkpointName, LAST_CHECKPOINT, readCheckpoint } from '../../../shared/bronze/checkpoint.ts';
import { comparePositions, positionOf, sinkAppId } from '../../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState } from '../../../shared/bronze/log-state.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { DEFAULT_PART_LIMITS, type PartLimits } from '../../../shared/bronze/write-version.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { liveRows, MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

class Crash extends Error {}

/** Counts every async port call; the `at`th one crashes `before` it runs or `after` it ran. */
class CrashPlan {
  calls: string[] = [];
  constructor(private readonly at?: { readonly index: number; readonly when: 'before' | 'after' }) {}
  wrap<T extends object>(name: string, target: T): T {
    return new Proxy(target, {
      get: (obj, prop, receiver) => {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function') return value;
        // A streamed log file (a checkpoint): each of its calls is a crash point of its own.
        if (prop === 'streamLogFile')
          return (...args: unknown[]) =>
            this.wrap(`${name}.stream`, (value as (...a: unknown[]) => object).apply(obj, args));
        return async (...args: unknown[]) => {
          const index = this.calls.length;
          this.calls.push(`${name}.${String(prop)}`);
          const crash = this.at?.index === index ? this.at.when : undefined;
          if (crash === 'before') throw new Crash(`crash before ${this.calls[index]}`);
          const result = await (value as (...a: unknown[]) => unknown).apply(obj, args);
          if (crash === 'after') throw new Crash(`crash after ${this.calls[index]}`);
          return result;
        };
      },
    });
  }
}

/** Version 3 brings a new column; every version has a record that is rescued. */
function world(versions: number) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  for (let v = 1; v <= versions; v++) {
    const keys = [`in/${v}-a.json`, `in/${v}-b.json`];
    sources.objects.set(
      keys[0] as string,
      `{"id":${v}1,"x":"a"}\n{"id":${v}2,"x":"b"${v >= 3 ? ',"y":1' : ''}}\n`,
    );
    sources.objects.set(keys[1] as string, `{"id":${v}3,"x":"c"}\nnot json ${v}\n`);
    manifests.set(v, manifestOf('t', v, keys));
  }
  return { manifests, sources, delta: new MemoryDelta(), cursors: new MemoryCursors() };
}

/** Unique over every run of the test, as UUIDs are: a replay must never reuse a name. */
let attempts = 0;

function sinkOf(w: ReturnType<typeof world>, plan: CrashPlan, parts?: PartLimits) {
  return new SinkTable({
    parts,
    newId: () => {
      attempts += 1;
      return `attempt${attempts}`;
    },
    config: parsePipelineConfig({
      tables: [{ name: 't', bronze: { format: 'json', checkpointInterval: 2 } }],
    }),
    store: { getManifest: async (_table, version) => w.manifests.get(version) },
    sources: plan.wrap('sources', w.sources),
    deltaAt: () => plan.wrap('delta', w.delta),
    cursors: plan.wrap('cursors', w.cursors),
    manifestBucket: 'mb',
    log: silentLog,
    now: () => 0,
  });
}

/** Every row the table holds at its latest version, read from the live files' Parquet, in a stable order. */
const tableRows = async (delta: MemoryDelta) =>
  (await liveRows(delta))
    .map((row) => JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)))
    .sort();

/** Delta versions 0..n-1, each ours and one step further, the rows those of the committed files, each once. */
async function checkTable(
  w: ReturnType<typeof world>,
  expectedRows: readonly string[],
  versions: number,
  commits: number,
) {
  expect([...w.delta.commits.keys()].sort((a, b) => a - b)).toEqual([...Array(commits).keys()]);
  const state = emptyLogState();
  let position = { manifestVersion: 0, filesDone: 0 };
  for (let d = 0; d < commits; d++) {
    applyCommit(state, d, w.delta.commits.get(d) ?? '');
    const next = positionOf('t', state.txns);
    expect(comparePositions(next, position), `Delta version ${d} moves the table on`).toBe(1);
    position = next;
  }
  expect(state.txns.get(sinkAppId('t'))?.version).toBe(versions);
  expect(await tableRows(w.delta)).toEqual(expectedRows);
  // A checkpoint at every other version, each equal to replaying the commits up to it; the pointer at the newest.
  const checkpoints = [...Array(commits).keys()].filter((v) => v > 0 && v % 2 === 0);
  for (const v of checkpoints) {
    const replayed = emptyLogState();
    for (let d = 0; d <= v; d++) applyCommit(replayed, d, w.delta.commits.get(d) ?? '');
    const bytes = w.delta.logFiles.get(checkpointName(v));
    expect(bytes, `checkpoint ${v}`).toBeDefined();
    expect(await readCheckpoint(v, bytes ?? new Uint8Array())).toEqual(replayed);
  }
  expect(JSON.parse(new TextDecoder().decode(w.delta.logFiles.get(LAST_CHECKPOINT)))).toMatchObject({
    version: checkpoints.at(-1),
  });
  expect(await w.cursors.get('t')).toMatchObject({
    manifestVersion: versions,
    filesDone: 0,
    deltaVersion: commits - 1,
  });
}

describe('the bronze sink crashed at every call', () => {
  for (const [name, parts, versions, commits] of [
    // Five versions as one commit each; three in parts of one file (six commits): each crash point of a
    // part is the same call whichever version it is in, and the matrix runs every occurrence.
    ['one commit per version', undefined, 5, 5],
    ['versions written in parts of one file', { ...DEFAULT_PART_LIMITS, maxFiles: 1 }, 3, 6],
  ] as const) {
    it(`leaves the same table after the next run, whatever call it died at (${name})`, {
      timeout: 180_000,
    }, async () => {
      const clean = world(versions);
      const cleanPlan = new CrashPlan();
      expect(
        (await sinkOf(clean, cleanPlan, parts).catchUp('t', Number.POSITIVE_INFINITY)).written,
      ).toHaveLength(commits);
      const expectedRows = await tableRows(clean.delta);
      // 3 rows and 1 rescued per file pair per version: every row of every committed file, once.
      expect(expectedRows).toHaveLength(versions * 4);
      const totals = await clean.cursors.get('t');
      expect(totals).toMatchObject({ rows: versions * 4, rescued: versions });
      const points = cleanPlan.calls;
      // Each kind of call the brief names is among the crash points.
      for (const call of [
        'sources.open',
        'delta.putDataFile',
        'delta.putCommitIfAbsent',
        'delta.listCommits',
        'delta.getLogFile',
        'cursors.advance',
        'delta.stream.close',
        'delta.putLogFile',
      ])
        expect(points).toContain(call);

      for (let index = 0; index < points.length; index++) {
        for (const when of ['before', 'after'] as const) {
          const w = world(versions);
          const label = `${when} call ${index} (${points[index]})`;
          await expect(
            sinkOf(w, new CrashPlan({ index, when }), parts).catchUp('t', Number.POSITIVE_INFINITY),
            label,
          ).rejects.toBeInstanceOf(Crash);
          const outcome = await sinkOf(w, new CrashPlan(), parts).catchUp('t', Number.POSITIVE_INFINITY);
          expect(outcome.caughtUp, label).toBe(true);
          await checkTable(w, expectedRows, versions, commits);
          // The cursor's running totals count each commit once, replayed or not.
          expect(await w.cursors.get('t'), label).toMatchObject({
            rows: totals.rows,
            rescued: totals.rescued,
          });
        }
      }
    });
  }
});

// The bronze sink crashed between each pair of its calls (read a landing file, write a data file, read or
// write the Delta log, write a checkpoint, read or advance the cursor), before the call takes effect and after
// it took effect but before its answer arrived. After every crash a clean run must leave the same table:
// rows in the table = rows in the committed versions' files, no duplicate, no missing version.
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { checkpointName, LAST_CHECKPOINT, readCheckpoint } from '../../shared/bronze/checkpoint.ts';
import { sinkAppId } from '../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState } from '../../shared/bronze/log-state.ts';
import { loadSnapshot } from '../../shared/bronze/snapshot.ts';
import { parsePipelineConfig } from '../../shared/config.ts';
import { silentLog } from '../../shared/log.ts';
import type { Manifest } from '../../shared/manifest.ts';
import { SinkTable } from '../../shared/usecases/sink.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './bronze-memory.ts';

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

const VERSIONS = 5;
/** Version 3 brings a new column; every version has a record that is rescued. */
function world() {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  for (let v = 1; v <= VERSIONS; v++) {
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

function sinkOf(w: ReturnType<typeof world>, plan: CrashPlan) {
  return new SinkTable({
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
async function tableRows(delta: MemoryDelta): Promise<string[]> {
  const { state } = await loadSnapshot(delta);
  const rows: string[] = [];
  for (const add of state.adds.values()) {
    const bytes = delta.files.get(add.path);
    if (!bytes) throw new Error(`the log names ${add.path}, which was never written`);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    for (const row of await parquetReadObjects({ file }))
      rows.push(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
  }
  return rows.sort();
}

async function checkTable(w: ReturnType<typeof world>, expectedRows: readonly string[]) {
  // Versions 0..V-1, each ours for manifest version d+1: no gap, no fork, none twice.
  expect([...w.delta.commits.keys()].sort((a, b) => a - b)).toEqual([...Array(VERSIONS).keys()]);
  for (const [d, text] of w.delta.commits) {
    const state = emptyLogState();
    applyCommit(state, d, text);
    expect(state.txns.get(sinkAppId('t'))?.version).toBe(d + 1);
  }
  expect(await tableRows(w.delta)).toEqual(expectedRows);
  // Checkpoints at 2 and 4, each equal to replaying the commits up to it; the pointer at the newest.
  for (const v of [2, 4]) {
    const replayed = emptyLogState();
    for (let d = 0; d <= v; d++) applyCommit(replayed, d, w.delta.commits.get(d) ?? '');
    const bytes = w.delta.logFiles.get(checkpointName(v));
    expect(bytes, `checkpoint ${v}`).toBeDefined();
    expect(await readCheckpoint(v, bytes ?? new Uint8Array())).toEqual(replayed);
  }
  expect(JSON.parse(new TextDecoder().decode(w.delta.logFiles.get(LAST_CHECKPOINT)))).toMatchObject({
    version: 4,
  });
  expect(await w.cursors.get('t')).toMatchObject({ deltaVersion: VERSIONS - 1 });
}

describe('the bronze sink crashed at every call', () => {
  it('leaves the same table after the next run, whatever call it died at', async () => {
    const clean = world();
    const cleanPlan = new CrashPlan();
    expect((await sinkOf(clean, cleanPlan).catchUp('t', Number.POSITIVE_INFINITY)).written).toHaveLength(
      VERSIONS,
    );
    const expectedRows = await tableRows(clean.delta);
    // 3 rows and 1 rescued per file pair per version: every row of every committed file, once.
    expect(expectedRows).toHaveLength(VERSIONS * 4);
    const totals = await clean.cursors.get('t');
    expect(totals).toMatchObject({ rows: VERSIONS * 4, rescued: VERSIONS });
    const points = cleanPlan.calls;
    // Each kind of call the brief names is among the crash points.
    for (const call of [
      'delta.putDataFile',
      'delta.putCommitIfAbsent',
      'cursors.advance',
      'delta.putLogFile',
    ])
      expect(points).toContain(call);

    for (let index = 0; index < points.length; index++) {
      for (const when of ['before', 'after'] as const) {
        const w = world();
        const label = `${when} call ${index} (${points[index]})`;
        await expect(
          sinkOf(w, new CrashPlan({ index, when })).catchUp('t', Number.POSITIVE_INFINITY),
          label,
        ).rejects.toBeInstanceOf(Crash);
        const outcome = await sinkOf(w, new CrashPlan()).catchUp('t', Number.POSITIVE_INFINITY);
        expect(outcome.caughtUp, label).toBe(true);
        await checkTable(w, expectedRows);
        // The cursor's running totals count each version once, replayed or not.
        expect(await w.cursors.get('t'), label).toMatchObject({ rows: totals.rows, rescued: totals.rescued });
      }
    }
  });
});

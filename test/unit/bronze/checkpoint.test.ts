import { describe, expect, it } from 'vitest';
import { checkpointName, LAST_CHECKPOINT, readCheckpoint } from '../../../shared/bronze/checkpoint.ts';
import { applyCommit, emptyLogState } from '../../../shared/bronze/log-state.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { checkpointDue, loadSnapshot, writeCheckpoint } from '../../../shared/bronze/snapshot.ts';
import { readBronzeTable } from '../../../shared/bronze/table-state.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

function setup(checkpointInterval: number) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const sink = new SinkTable({
    config: parsePipelineConfig({ tables: [{ name: 't', bronze: { format: 'json', checkpointInterval } }] }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: () => delta,
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    now: () => 0,
  });
  /** Manifest version v: two good rows and one unparseable line (rescued). */
  const commit = (v: number) => {
    sources.objects.set(`f${v}.json`, `{"a":${v}}\n{"a":${v * 10},"b":"x"}\nnope\n`);
    manifests.set(v, manifestOf('t', v, [`f${v}.json`]));
  };
  const catchUp = () => sink.catchUp('t', Number.POSITIVE_INFINITY);
  const last = () => JSON.parse(new TextDecoder().decode(delta.logFiles.get(LAST_CHECKPOINT))) as unknown;
  return { delta, cursors, commit, catchUp, last };
}

describe('Delta checkpoints', () => {
  it('are due every N versions, never at version 0, and at the next version when one was missed', () => {
    // The last checkpoint is the previous multiple: due again at each multiple of N.
    expect([0, 1, 2, 3, 4, 5, 6].filter((v) => checkpointDue(v, Math.floor((v - 1) / 3) * 3, 3))).toEqual([
      3, 6,
    ]);
    expect([0, 1, 2].filter((v) => checkpointDue(v, v - 1, 1))).toEqual([1, 2]);
    // Version 3 was another writer's (or its checkpoint was lost to a crash): version 4 takes it.
    expect(checkpointDue(4, 0, 3)).toBe(true);
    expect(checkpointDue(4, 3, 3)).toBe(false);
  });

  it('the sink writes one every N versions and points _last_checkpoint at the newest', async () => {
    const t = setup(2);
    for (let v = 1; v <= 5; v++) t.commit(v);
    await t.catchUp();
    expect([...t.delta.logFiles.keys()].sort()).toEqual([
      checkpointName(2),
      checkpointName(4),
      LAST_CHECKPOINT,
    ]);
    expect(t.last()).toMatchObject({ version: 4, numOfAddFiles: 5 });
  });

  it('holds the same state as replaying every commit: protocol, metaData, txn, files and their counts', async () => {
    const t = setup(3);
    for (let v = 1; v <= 4; v++) t.commit(v);
    await t.catchUp();
    const replayed = emptyLogState();
    for (const v of [0, 1, 2, 3]) applyCommit(replayed, v, t.delta.commits.get(v) ?? '');
    const fromCheckpoint = await readCheckpoint(
      3,
      t.delta.logFiles.get(checkpointName(3)) ?? new Uint8Array(),
    );
    expect(fromCheckpoint).toEqual(replayed);
    expect(fromCheckpoint.txns.get('inlet-bronze-t')?.version).toBe(4);
    expect(fromCheckpoint.adds.size).toBe(4);
  });

  it('inlet table reads from the checkpoint on, and still works without it', async () => {
    const t = setup(2);
    for (let v = 1; v <= 4; v++) t.commit(v);
    await t.catchUp();
    const expected = { version: 3, rows: 12, rescued: 4, files: 4 };
    t.delta.commitReads = 0;
    const fast = await readBronzeTable('t', t.delta);
    expect(fast).toMatchObject({ ...expected, checkpointVersion: 2, commitsRead: 1 });
    expect(t.delta.commitReads).toBe(1);
    expect(fast.schema).toEqual([
      { name: 'a', type: 'long' },
      { name: 'b', type: 'string' },
    ]);
    t.delta.logFiles.set(checkpointName(2), new TextEncoder().encode('not parquet'));
    expect(await readBronzeTable('t', t.delta)).toMatchObject({ ...expected, commitsRead: 4 });
    t.delta.logFiles.clear();
    expect(await readBronzeTable('t', t.delta)).toMatchObject({ ...expected, commitsRead: 4 });
  });

  it('a crash before the checkpoint, or between it and _last_checkpoint, is repaired by the next run', async () => {
    const t = setup(2);
    for (let v = 1; v <= 3; v++) t.commit(v);
    const put = t.delta.putLogFile.bind(t.delta);
    const stream = t.delta.streamLogFile.bind(t.delta);
    let failOn: string | undefined = checkpointName(2);
    t.delta.putLogFile = async (name, body) => {
      if (name === failOn) throw new Error(`crash before ${name}`);
      await put(name, body);
    };
    t.delta.streamLogFile = (name) => {
      const out = stream(name);
      return {
        ...out,
        close: async () => {
          if (name === failOn) throw new Error(`crash before ${name}`);
          await out.close();
        },
      };
    };
    await expect(t.catchUp()).rejects.toThrow(`crash before ${checkpointName(2)}`);
    // The commit is in, the cursor is not: the version will be replayed.
    expect([...t.delta.commits.keys()]).toEqual([0, 1, 2]);
    expect(await t.cursors.get('t')).toMatchObject({ deltaVersion: 1 });
    failOn = LAST_CHECKPOINT;
    await expect(t.catchUp()).rejects.toThrow(`crash before ${LAST_CHECKPOINT}`);
    expect(t.delta.logFiles.has(checkpointName(2))).toBe(true);
    failOn = undefined;
    expect((await t.catchUp()).written).toEqual([2]);
    expect(t.last()).toMatchObject({ version: 2 });
    expect(await t.cursors.get('t')).toMatchObject({ deltaVersion: 2, rows: 9, rescued: 3 });
    expect(t.delta.commits.size).toBe(3);
  });

  it('_last_checkpoint never moves back when an older checkpoint is written again', async () => {
    const t = setup(2);
    for (let v = 1; v <= 5; v++) t.commit(v);
    await t.catchUp();
    await writeCheckpoint(t.delta, 2);
    expect(t.last()).toMatchObject({ version: 4 });
    // A reader time travelling to 3 cannot use checkpoint 4: it replays from the log.
    expect((await loadSnapshot(t.delta, 3)).state.version).toBe(3);
  });

  it('keeps the rescued count of a commit written before files carried it in their tags', async () => {
    const state = emptyLogState();
    applyCommit(
      state,
      0,
      [
        JSON.stringify({ commitInfo: { inlet: { rescuedRows: 2 } } }),
        JSON.stringify({
          add: { path: 'p', partitionValues: {}, size: 1, modificationTime: 0, dataChange: true },
        }),
      ].join('\n'),
    );
    expect(state.adds.get('p')?.tags).toEqual({ 'inlet.rescuedRows': '2' });
  });

  it('refuses a log with a missing version instead of skipping it', async () => {
    const t = setup(100);
    for (let v = 1; v <= 3; v++) t.commit(v);
    await t.catchUp();
    t.delta.commits.delete(1);
    await expect(loadSnapshot(t.delta)).rejects.toThrow('Delta log has no version 1 before 2');
  });
});

import { describe, expect, it } from 'vitest';
import { catalogTable } from '../../../shared/bronze/catalog.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { headSchema, loadHead } from '../../../shared/bronze/table-head.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';
import { MemoryCatalog } from './memory-catalog.ts';

const DB = 'stack_bronze';

/** A bronze table `t-1` whose sink registers it in `DB`; `commit(v, rows)` publishes one JSON file. */
function setup(options: { readonly catalog?: boolean } = {}) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const cursors = new MemoryCursors();
  const delta = new MemoryDelta();
  const glue = new MemoryCatalog();
  const sink = new SinkTable({
    config: parsePipelineConfig({
      tables: [{ name: 't-1', prefix: 'in/', bronze: { format: 'json', catalog: options.catalog } }],
    }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: () => delta,
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    ...systemClock,
    catalog: { tables: glue, database: DB },
  });
  const commit = (v: number, rows: readonly object[]) => {
    const key = `in/${v}.json`;
    sources.objects.set(key, rows.map((r) => JSON.stringify(r)).join('\n'));
    manifests.set(v, manifestOf('t-1', v, [key]));
  };
  const columns = () => glue.entry(DB, 't_1')?.StorageDescriptor.Columns.map((c) => `${c.Name} ${c.Type}`);
  return {
    sink,
    glue,
    cursors,
    delta,
    commit,
    columns,
    run: () => sink.catchUp('t-1', Number.POSITIVE_INFINITY),
  };
}

describe('the sink keeps each bronze table registered in Glue', () => {
  it('registers the table with the first commit, columns as in the Delta schema', async () => {
    const { glue, commit, columns, run, cursors, delta } = setup();
    commit(1, [{ id: 1, name: 'a' }]);
    await run();
    expect(columns()).toEqual([
      'id bigint',
      'name string',
      '_rescued_data string',
      '_source_file string',
      '_manifest_version bigint',
    ]);
    const entry = glue.entry(DB, 't_1');
    expect(entry).toEqual(
      catalogTable({
        table: 't-1',
        location: 's3://mb/t-1/_bronze',
        schema: [
          { name: 'id', type: 'long' },
          { name: 'name', type: 'string' },
        ],
        deltaVersion: 0,
      }),
    );
    const cursor = await cursors.get('t-1');
    expect(cursor.catalogued).toBe(cursor.deltaVersion);
    // The schema the entry lists is the log's.
    expect(headSchema(await loadHead(delta, 't-1', -1))?.map((c) => c.name)).toEqual(['id', 'name']);
  });

  it('updates the entry with the commit that adds a column, and writes nothing to Glue otherwise', async () => {
    const { glue, commit, columns, run } = setup();
    commit(1, [{ id: 1 }]);
    await run();
    commit(2, [{ id: 2 }]);
    await run();
    expect(glue.calls).toEqual(['get t_1', 'create t_1']);
    commit(3, [{ id: 3, city: 'Lyon' }]);
    await run();
    expect(columns()).toContain('city string');
    expect(glue.calls.slice(2)).toEqual(['get t_1', 'update t_1']);
  });

  it('a Glue failure loses no row and holds nothing back; the next run, with nothing to write, repairs it', async () => {
    const { glue, commit, columns, run, cursors } = setup();
    commit(1, [{ id: 1 }, { id: 2 }]);
    glue.failNext = 1;
    const first = await run();
    expect(first.caughtUp).toBe(true);
    expect(first.added.rows).toBe(2);
    expect(glue.entry(DB, 't_1')).toBeUndefined();
    const behind = await cursors.get('t-1');
    expect(behind.deltaVersion).toBe(0);
    expect(behind.catalogued).toBeUndefined();

    const second = await run();
    expect(second.written).toEqual([]);
    expect(second.added.rows).toBe(0);
    expect(columns()).toContain('id bigint');
    expect((await cursors.get('t-1')).catalogued).toBe(0);
    // In step now: a run with nothing to write reads neither the log nor Glue.
    const calls = glue.calls.length;
    await run();
    expect(glue.calls.length).toBe(calls);
  });

  it('a table with catalog: false is never registered', async () => {
    const { glue, commit, run } = setup({ catalog: false });
    commit(1, [{ id: 1 }]);
    await run();
    await run();
    expect(glue.calls).toEqual([]);
  });
});

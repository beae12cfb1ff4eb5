import { describe, expect, it } from 'vitest';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { projectManifests } from '../../../shared/bronze/symlink-manifest.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';
import { MemoryManifests } from './memory-manifests.ts';

const LOCATION = 's3://mb/t-1/_bronze';

function setup(bronze: Record<string, unknown> = {}) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const cursors = new MemoryCursors();
  const delta = new MemoryDelta();
  const links = new MemoryManifests();
  const sink = new SinkTable({
    config: parsePipelineConfig({
      tables: [{ name: 't-1', prefix: 'in/', bronze: { format: 'json', symlinkManifest: true, ...bronze } }],
    }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: () => delta,
    manifestsAt: (bucket, prefix) => {
      expect(`s3://${bucket}/${prefix}`).toBe(LOCATION);
      return links;
    },
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    ...systemClock,
  });
  const commit = (v: number, rows: readonly object[]) => {
    const key = `in/${v}.json`;
    sources.objects.set(key, rows.map((r) => JSON.stringify(r)).join('\n'));
    manifests.set(v, manifestOf('t-1', v, [key]));
  };
  /** The live data files as manifest lines: the table's location and each add's decoded path. */
  const live = async (dir = '') =>
    [...(await loadSnapshot(delta)).state.adds.values()]
      .map((a) => `${LOCATION}/${decodeURIComponent(a.path)}`)
      .filter((line) => line.startsWith(`${LOCATION}/${dir}`))
      .sort();
  return {
    sink,
    links,
    cursors,
    delta,
    commit,
    live,
    run: () => sink.catchUp('t-1', Number.POSITIVE_INFINITY),
  };
}

describe('symlink manifests (Redshift Spectrum reads the table through them)', () => {
  it('lists every live data file after each commit, as absolute paths, one per line', async () => {
    const { links, commit, run, live, cursors } = setup();
    commit(1, [{ id: 1 }]);
    await run();
    commit(2, [{ id: 2 }]);
    await run();
    expect(links.lines('')).toEqual(await live());
    expect(links.lines('')).toHaveLength(2);
    expect(links.objects.get('')?.body.endsWith('\n')).toBe(true);
    expect(links.objects.get('')?.version).toBe(1);
    const cursor = await cursors.get('t-1');
    expect(cursor.symlinked).toBe(cursor.deltaVersion);
  });

  it('a partitioned table has one manifest per partition directory; a commit rewrites only the partitions it touched', async () => {
    const { links, commit, run, live } = setup({
      schemaHints: { region: 'string' },
      partitionBy: ['region'],
    });
    commit(1, [
      { id: 1, region: 'eu' },
      { id: 2, region: 'us west' },
    ]);
    await run();
    expect([...links.objects.keys()].sort()).toEqual(['region=eu/', 'region=us west/']);
    commit(2, [{ id: 3, region: 'eu' }]);
    await run();
    expect(links.writes).toEqual(['region=eu/', 'region=us west/', 'region=eu/']);
    expect(links.lines('region=eu/')).toEqual(await live('region=eu/'));
    expect(links.lines('region=eu/')).toHaveLength(2);
    expect(links.lines('region=us west/')).toEqual(await live('region=us west/'));
  });

  it('a failed manifest write loses no row and holds nothing back; the next run, with nothing to write, repairs it', async () => {
    const { links, commit, run, live, cursors } = setup();
    commit(1, [{ id: 1 }, { id: 2 }]);
    links.failNext = 1;
    const first = await run();
    expect(first.caughtUp).toBe(true);
    expect(first.added.rows).toBe(2);
    expect(links.objects.size).toBe(0);
    expect((await cursors.get('t-1')).symlinked).toBeUndefined();

    await run();
    expect(links.lines('')).toEqual(await live());
    expect((await cursors.get('t-1')).symlinked).toBe(0);
    const writes = links.writes.length;
    await run();
    expect(links.writes.length).toBe(writes);
  });

  it('a projection of an older version never replaces a newer one; a racing write is read again', async () => {
    const { links, commit, run, delta } = setup();
    commit(1, [{ id: 1 }]);
    commit(2, [{ id: 2 }]);
    await run();
    const newest = links.objects.get('');
    expect(newest?.version).toBe(1);
    const project = (version: number) =>
      projectManifests({
        table: 't-1',
        delta,
        manifests: links,
        location: LOCATION,
        version,
        since: undefined,
        log: silentLog,
      });
    expect(await project(0)).toBe(true);
    expect(links.objects.get('')).toEqual(newest);

    // Another writer replaces the manifest between this projection's read and its write: read again.
    links.objects.set('', { body: 'stale\n', version: 0, etag: '"other"' });
    links.beforeWrite = () => links.objects.set('', { body: 'racer\n', version: 0, etag: '"racer"' });
    expect(await project(1)).toBe(true);
    expect(links.objects.get('')?.version).toBe(1);
    expect(links.lines('')).toEqual(newest?.body.split('\n').filter((l) => l !== ''));
  });

  it('a projection before the table has a commit writes nothing: a partitioned table keeps no stray root manifest', async () => {
    // The maintenance run projects before vacuum on its schedule, which may fire before the sink's first
    // commit; found by the simulation's optimize scenario (a root manifest at Delta -1 beside the partitions').
    const { links, commit, run, delta } = setup({
      schemaHints: { region: 'string' },
      partitionBy: ['region'],
    });
    const project = () =>
      projectManifests({
        table: 't-1',
        delta,
        manifests: links,
        location: LOCATION,
        version: Number.POSITIVE_INFINITY,
        since: undefined,
        log: silentLog,
      });
    expect(await project()).toBe(true);
    expect(links.objects.size).toBe(0);
    commit(1, [{ id: 1, region: 'eu' }]);
    await run();
    expect(await project()).toBe(true);
    expect([...links.objects.keys()]).toEqual(['region=eu/']);
  });

  it('a table without symlinkManifest writes none', async () => {
    const { links, commit, run, cursors } = setup({ symlinkManifest: false });
    commit(1, [{ id: 1 }]);
    await run();
    expect(links.objects.size).toBe(0);
    expect((await cursors.get('t-1')).symlinked).toBeUndefined();
  });
});

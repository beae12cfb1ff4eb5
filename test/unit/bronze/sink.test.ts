import { describe, expect, it } from 'vitest';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { tailVersions } from '../../../shared/ingestion/manifest-tail.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

function setup() {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const roots: string[] = [];
  const sink = new SinkTable({
    config: parsePipelineConfig({ tables: [{ name: 't', bronze: { format: 'json' } }] }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: (bucket, prefix) => {
      roots.push(`${bucket}/${prefix}`);
      return delta;
    },
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    now: () => 0,
  });
  const commitVersion = (version: number, lines: string[]) => {
    sources.objects.set(`f${version}.json`, lines.join('\n'));
    manifests.set(version, manifestOf('t', version, [`f${version}.json`]));
  };
  return { manifests, sources, delta, cursors, sink, roots, commitVersion };
}

describe('the bronze sink use case', () => {
  it('writes committed versions in order as Delta versions v-1 and stops at the first uncommitted one', async () => {
    const { sink, delta, cursors, roots, commitVersion } = setup();
    commitVersion(1, ['{"a":1}', '{"a":2}']);
    commitVersion(2, ['{"a":3,"b":"new"}']);
    const outcome = await sink.catchUp('t', Number.POSITIVE_INFINITY);
    expect(outcome).toMatchObject({ written: [0, 1], caughtUp: true });
    expect([...delta.commits.keys()]).toEqual([0, 1]);
    expect(await cursors.get('t')).toMatchObject({ deltaVersion: 1, rows: 3, rescued: 0 });
    expect(roots[0]).toBe('mb/t/_bronze');
    commitVersion(3, ['{"a":4}']);
    expect((await sink.catchUp('t', Number.POSITIVE_INFINITY)).written).toEqual([2]);
  });

  it('a crash between the Delta commit and the cursor advance replays to one commit and counts rows once', async () => {
    const { sink, delta, cursors, commitVersion } = setup();
    commitVersion(1, ['{"a":1}', '{"a":2}']);
    const advance = cursors.advance.bind(cursors);
    cursors.advance = async () => {
      throw new Error('crash after the commit');
    };
    await expect(sink.catchUp('t', Number.POSITIVE_INFINITY)).rejects.toThrow('crash after the commit');
    expect(delta.commits.size).toBe(1);
    cursors.advance = advance;
    const outcome = await sink.catchUp('t', Number.POSITIVE_INFINITY);
    expect(outcome.written).toEqual([0]);
    expect(delta.commits.size).toBe(1);
    expect(await cursors.get('t')).toEqual({
      table: 't',
      manifestVersion: 1,
      filesDone: 0,
      deltaVersion: 0,
      location: 's3://mb/t/_bronze',
      rows: 2,
      rescued: 0,
    });
  });

  it('stops when the time budget is spent and reports that it is not caught up', async () => {
    const { sink, commitVersion } = setup();
    commitVersion(1, ['{"a":1}']);
    expect(await sink.catchUp('t', -1)).toMatchObject({ written: [], caughtUp: false });
  });

  it('tailVersions yields committed versions in order from a checkpoint', async () => {
    const { manifests, commitVersion } = setup();
    for (const v of [1, 2, 3]) commitVersion(v, ['{}']);
    const seen: number[] = [];
    for await (const m of tailVersions({ getManifest: async (_t, v) => manifests.get(v) }, 't', 2))
      seen.push(m.version);
    expect(seen).toEqual([2, 3]);
  });
});

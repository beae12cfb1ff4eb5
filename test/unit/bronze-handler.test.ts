import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../shared/config.ts';
import { makeSinkHandler } from '../../shared/handlers/sink-handler.ts';
import { silentLog } from '../../shared/log.ts';
import type { Manifest } from '../../shared/manifest.ts';
import { MemoryMetrics } from '../../shared/metrics.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf, sinkEvent } from './bronze-memory.ts';

function setup(now: () => number = () => 0) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const nudges: Array<[string, number]> = [];
  for (const v of [1, 2]) {
    sources.objects.set(`f${v}.json`, `{"a":${v}}\n`);
    manifests.set(v, manifestOf('t', v, [`f${v}.json`]));
  }
  const handler = makeSinkHandler({
    config: parsePipelineConfig({ tables: [{ name: 't', bronze: { format: 'json' } }] }),
    store: { getManifest: async (_t, v) => manifests.get(v) },
    sources,
    deltaAt: () => delta,
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    now,
    nudger: { nudge: async (table, after) => void nudges.push([table, after]) },
    metrics: new MemoryMetrics(),
  });
  return { handler, delta, cursors, nudges };
}

const committed = JSON.stringify({
  'detail-type': 'BatchCommitted',
  source: 'inlet',
  detail: { table: 't', version: 2 },
});

describe('the sink Lambda handler', () => {
  it('takes BatchCommitted events and its own nudges, catches the table up once per invocation', async () => {
    const { handler, delta, cursors, nudges } = setup();
    const response = await handler(sinkEvent([committed, JSON.stringify({ table: 't' }), committed]), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(response.batchItemFailures).toEqual([]);
    expect([...delta.commits.keys()]).toEqual([0, 1]);
    expect((await cursors.get('t')).deltaVersion).toBe(1);
    expect(nudges).toEqual([]);
  });

  it('nudges itself when the time budget runs out before the table is caught up', async () => {
    let t = 0;
    const { handler, delta, nudges } = setup(() => (t += 40_000));
    await handler(sinkEvent([committed]), { getRemainingTimeInMillis: () => 120_000 });
    expect(delta.commits.size).toBeLessThan(2);
    expect(nudges).toHaveLength(1);
  });

  it('fails a malformed message (to the DLQ after retries) and the rest of the FIFO batch with it', async () => {
    const { handler } = setup();
    const response = await handler(sinkEvent(['not json', committed]), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
  });
});

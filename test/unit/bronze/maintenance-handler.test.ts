import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { makeMaintenanceHandler } from '../../../shared/bronze/maintenance-handler.ts';
import type { DeltaStore } from '../../../shared/bronze/ports.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { METRIC } from '../../../shared/kernel/metrics.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { memoryTableFiles } from './table-files.ts';

async function tableOfSmallFiles(versions: number): Promise<MemoryDelta> {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const config = bronzeConfigSchema.parse({ format: 'jsonl' });
  let schema: Awaited<ReturnType<typeof writeVersion>>['schema'] | undefined;
  for (let v = 1; v <= versions; v++) {
    sources.objects.set(`f${v}`, `{"id":${v}}\n`);
    schema = (
      await writeVersion(
        { sources, delta },
        { table: 't', location: 's3://b/p', config, manifest: manifestOf('t', v, [`f${v}`]), schema },
      )
    ).schema;
  }
  return delta;
}

function setup(deltas: Record<string, DeltaStore & Partial<MemoryDelta>>) {
  const counted = new Map<string, number>();
  const config = parsePipelineConfig({
    tables: [
      { name: 'a', prefix: 'a/', bronze: { format: 'jsonl', maintenance: {} } },
      { name: 'b', prefix: 'b/', bronze: { format: 'jsonl', maintenance: {} } },
      { name: 'c', prefix: 'c/', bronze: { format: 'jsonl' } },
    ],
  });
  const handler = makeMaintenanceHandler({
    ...systemClock,
    config,
    manifestBucket: 'm',
    tableAt: (_bucket, prefix) => {
      const delta = deltas[prefix.split('/')[0] as string] as MemoryDelta;
      return { delta, files: memoryTableFiles(delta) };
    },
    newId: () => 'x',
    log: silentLog,
    metrics: {
      count: (name, n) => void counted.set(name, (counted.get(name) ?? 0) + n),
      milliseconds() {},
      flush() {},
    },
  });
  return { handler, counted };
}

describe('the maintenance handler', () => {
  it('optimizes and vacuums every table that asks, counting what it did', async () => {
    const a = await tableOfSmallFiles(4);
    const b = await tableOfSmallFiles(3);
    const c = await tableOfSmallFiles(3);
    const { handler, counted } = setup({ a, b, c });
    const result = await handler({}, { getRemainingTimeInMillis: () => 900_000 });
    expect(result).toEqual({ tables: 2, failed: [] });
    expect((await loadSnapshot(a)).state.adds.size).toBe(1);
    expect((await loadSnapshot(b)).state.adds.size).toBe(1);
    expect((await loadSnapshot(c)).state.adds.size).toBe(3);
    expect(counted.get(METRIC.optimizeFilesRemoved)).toBe(7);
    expect(counted.get(METRIC.optimizeFilesAdded)).toBe(2);
    // Removed just now: within the retention, nothing to vacuum yet.
    expect(counted.get(METRIC.vacuumFilesDeleted)).toBe(0);
  });

  it('runs only the table its schedule names', async () => {
    const a = await tableOfSmallFiles(2);
    const b = await tableOfSmallFiles(2);
    const { handler } = setup({ a, b, c: new MemoryDelta() });
    expect(await handler({ table: 'b' })).toEqual({ tables: 1, failed: [] });
    expect((await loadSnapshot(a)).state.adds.size).toBe(2);
    expect((await loadSnapshot(b)).state.adds.size).toBe(1);
  });

  it('goes on with the other tables when one fails, then fails the invocation so it is alarmed', async () => {
    const a = await tableOfSmallFiles(2);
    a.failNext = 'data';
    const b = await tableOfSmallFiles(2);
    const { handler, counted } = setup({ a, b, c: new MemoryDelta() });
    await expect(handler({})).rejects.toThrow(/failed for a/);
    expect((await loadSnapshot(b)).state.adds.size).toBe(1);
    expect(counted.get(METRIC.maintenanceErrors)).toBe(1);
  });
});

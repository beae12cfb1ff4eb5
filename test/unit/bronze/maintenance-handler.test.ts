import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { makeMaintenanceHandler } from '../../../shared/bronze/maintenance-handler.ts';
import {
  type MaintenanceRecord,
  type MaintenanceRecords,
  maintenanceRecordSchema,
} from '../../../shared/bronze/maintenance-record.ts';
import type { DeltaStore } from '../../../shared/bronze/ports.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { METRIC } from '../../../shared/kernel/metrics.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { MemoryManifests } from './memory-manifests.ts';
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

/** Each table's maintenance record, in memory. */
class Records implements MaintenanceRecords {
  record: MaintenanceRecord | undefined;
  async get() {
    return this.record;
  }
  async put(record: MaintenanceRecord) {
    this.record = maintenanceRecordSchema.parse(record);
  }
}

function setup(deltas: Record<string, DeltaStore & Partial<MemoryDelta>>, now = () => Date.now()) {
  const counted = new Map<string, number>();
  const records = new Map<string, Records>();
  const config = parsePipelineConfig({
    tables: [
      { name: 'a', prefix: 'a/', bronze: { format: 'jsonl', maintenance: {} } },
      { name: 'b', prefix: 'b/', bronze: { format: 'jsonl', maintenance: {} } },
      { name: 'c', prefix: 'c/', bronze: { format: 'jsonl', maintenance: false } },
    ],
  });
  const handler = makeMaintenanceHandler({
    ...systemClock,
    now,
    config,
    manifestBucket: 'm',
    tableAt: (_bucket, prefix) => {
      const name = prefix.split('/')[0] as string;
      const delta = deltas[name] as MemoryDelta;
      const record = records.get(name) ?? new Records();
      records.set(name, record);
      return { delta, files: memoryTableFiles(delta), records: record };
    },
    newId: () => 'x',
    log: silentLog,
    metrics: {
      count: (name, n) => void counted.set(name, (counted.get(name) ?? 0) + n),
      milliseconds() {},
      flush() {},
    },
  });
  return { handler, counted, records };
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

  it("records what each run did where `inlet table` reads it: the last optimize's version and files, the last vacuum", async () => {
    const a = await tableOfSmallFiles(4);
    let clock = Date.parse('2026-12-01T00:00:00.000Z');
    const { handler, records } = setup({ a, b: new MemoryDelta(), c: new MemoryDelta() }, () => clock);
    await handler({ table: 'a' });
    const first = records.get('a')?.record;
    expect(first?.optimize).toEqual({
      at: '2026-12-01T00:00:00.000Z',
      version: 4,
      commits: 1,
      filesRemoved: 4,
      filesAdded: 1,
      bytesRemoved: expect.any(Number),
      bytesAdded: expect.any(Number),
    });
    expect(first?.vacuum).toEqual({
      at: '2026-12-01T00:00:00.000Z',
      filesDeleted: 0,
      bytesDeleted: 0,
      retentionHours: 168,
    });
    // Eight days on: nothing left to optimize (the last optimize stays recorded), the four files vacuumed.
    clock += 8 * 86_400_000;
    await handler({ table: 'a' });
    const second = records.get('a')?.record;
    expect(second?.ranAt).toBe('2026-12-09T00:00:00.000Z');
    expect(second?.optimize).toEqual(first?.optimize);
    expect(second?.vacuum).toMatchObject({ at: '2026-12-09T00:00:00.000Z', filesDeleted: 4 });
    expect(second?.vacuum?.bytesDeleted).toBe(first?.optimize?.bytesRemoved);
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

  it("keeps a symlinkManifest table's manifests listing the optimized files, and vacuums nothing while they cannot be written", async () => {
    const a = await tableOfSmallFiles(3);
    const links = new MemoryManifests();
    const at = (daysLater: number) =>
      makeMaintenanceHandler({
        ...systemClock,
        now: () => Date.now() + daysLater * 24 * 3_600_000,
        config: parsePipelineConfig({
          tables: [
            { name: 'a', prefix: 'a/', bronze: { format: 'jsonl', maintenance: {}, symlinkManifest: true } },
          ],
        }),
        manifestBucket: 'm',
        tableAt: () => ({ delta: a, files: memoryTableFiles(a), records: new Records(), manifests: links }),
        newId: () => 'x',
        log: silentLog,
        metrics: { count() {}, milliseconds() {}, flush() {} },
      });
    await at(0)({});
    const { state } = await loadSnapshot(a);
    expect(state.adds.size).toBe(1);
    expect(links.lines('')).toEqual([...state.adds.keys()].map((path) => `s3://m/a/_bronze/${path}`));
    expect(links.objects.get('')?.version).toBe(state.version);
    const files = a.files.size;

    // Past the retention, but the manifests cannot be written: the table fails, vacuum deletes nothing.
    links.failNext = 1;
    links.objects.clear();
    await expect(at(30)({})).rejects.toThrow(/failed for a/);
    expect(a.files.size).toBe(files);
    // Once they are written again, vacuum deletes the three files optimize replaced.
    await at(30)({});
    expect(a.files.size).toBe(files - 3);
    expect(links.lines('')).toEqual([...state.adds.keys()].map((path) => `s3://m/a/_bronze/${path}`));
  });
});

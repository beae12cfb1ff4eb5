import { describe, expect, it } from 'vitest';
import type { CleanOutcome, LandingCleaner, SinkCursor } from '../../../shared/bronze/ports.ts';
import { makeSinkHandler } from '../../../shared/bronze/sink-handler.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { type Log, silentLog } from '../../../shared/kernel/log.ts';
import { METRIC, MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf, sinkEvent } from './memory.ts';
import { MemoryCatalog } from './memory-catalog.ts';
import { MemoryManifests } from './memory-manifests.ts';

/** The body EventBridge Scheduler sends (infra/bronze.ts): the table and the firing's scheduled time. */
const scheduled = (at: string) => sinkEvent([JSON.stringify({ table: 't', scheduledAt: at })], [`s-${at}`]);

/** Every call the sink makes on its ports, counted, so "costs nothing" is a number a test can check. */
class CountingCursors extends MemoryCursors {
  gets = 0;
  writes = 0;
  override async get(table: string): Promise<SinkCursor> {
    this.gets += 1;
    return super.get(table);
  }
  override async advance(from: SinkCursor, to: SinkCursor): Promise<boolean> {
    this.writes += 1;
    return super.advance(from, to);
  }
  override async advanceCleaned(table: string, from: number, to: number): Promise<boolean> {
    this.writes += 1;
    return super.advanceCleaned(table, from, to);
  }
}

/** Moves every file, but leaves those `left` names (another write at the key) and fails on `fail`. */
class Cleaner implements LandingCleaner {
  constructor(private readonly outcomes: { left?: string[]; fail?: string } = {}) {}
  async remove(ref: ObjectRef) {
    return this.move(ref);
  }
  async move(ref: ObjectRef): Promise<CleanOutcome> {
    if (ref.key === this.outcomes.fail) throw new Error('AccessDenied');
    if (this.outcomes.left?.includes(ref.key)) return { kind: 'left', reason: '412' };
    return { kind: 'removed' };
  }
}

function setup(
  options: {
    bronze?: Record<string, unknown>;
    now?: () => number;
    log?: Log;
    onManifestRead?: () => void;
    cleaner?: LandingCleaner;
    catalog?: MemoryCatalog;
    manifests?: MemoryManifests;
  } = {},
) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new CountingCursors();
  const metrics = new MemoryMetrics();
  let manifestReads = 0;
  const handler = makeSinkHandler({
    config: parsePipelineConfig({
      tables: [{ name: 't', prefix: 'in/', bronze: { format: 'json', ...options.bronze } }],
    }),
    store: {
      getManifest: async (_t, v) => {
        manifestReads += 1;
        options.onManifestRead?.();
        return manifests.get(v);
      },
    },
    sources,
    deltaAt: () => delta,
    cursors,
    heads: { committedHead: async () => manifests.size },
    cleaner: options.cleaner ?? new Cleaner(),
    manifestBucket: 'mb',
    log: options.log ?? silentLog,
    ...systemClock,
    now: options.now ?? (() => Date.parse('2026-12-30T00:00:00.000Z')),
    nudger: { nudge: async () => {} },
    metrics,
    ...(options.catalog ? { catalog: { tables: options.catalog, database: 'db' } } : {}),
    ...(options.manifests ? { manifestsAt: () => options.manifests as MemoryManifests } : {}),
  });
  const commit = (v: number, files: Record<string, string>) => {
    for (const [key, body] of Object.entries(files)) sources.objects.set(key, body);
    manifests.set(v, manifestOf('t', v, Object.keys(files)));
  };
  return { handler, delta, cursors, metrics, commit, sources, reads: () => manifestReads };
}

const total = (metrics: MemoryMetrics, name: string) => metrics.totals.get(name);

describe('the sink publishes what it did as metrics', () => {
  it('counts versions, rows, rescued rows, data files and bytes, cleaned files, and lag 0', async () => {
    const { handler, delta, metrics, commit } = setup({
      bronze: { cleanSource: { action: 'move', moveTo: 's3://archive/x', retentionDays: 1 } },
    });
    commit(1, { 'in/a.json': '{"id":1}\n{"id":2}\n', 'in/c.json': '{"id":3}\n' });
    // A string in a long column is rescued (the row kept); a line that is not JSON is a rescued row too.
    commit(2, { 'in/b.json': '{"id":"four"}\nnot json\n{"id":6}\n' });

    const response = await handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });

    expect(response.batchItemFailures).toEqual([]);
    const bytes = [...delta.files.values()].reduce((sum, f) => sum + f.byteLength, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(Object.fromEntries(metrics.totals)).toEqual({
      [METRIC.sinkVersions]: 2,
      [METRIC.sinkRows]: 6,
      [METRIC.sinkRescued]: 2,
      [METRIC.sinkDataFiles]: delta.files.size,
      [METRIC.sinkDataBytes]: bytes,
      [METRIC.sinkFilesCleaned]: 3,
      [METRIC.sinkSourcesMissing]: 0,
      [METRIC.sinkFilesLeft]: 0,
      [METRIC.sinkCleanErrors]: 0,
      [METRIC.sinkCatalogErrors]: 0,
      [METRIC.sinkManifestErrors]: 0,
      [METRIC.sinkBehind]: 0,
    });
    expect(delta.files.size).toBe(2);
  });

  it('counts files cleanSource left in place (warned with the reason), and a clean that failed, without failing the run', async () => {
    const warnings: { message: string; extra?: Record<string, unknown> }[] = [];
    const log: Log = { ...silentLog, warn: (message, extra) => warnings.push({ message, extra }) };
    const bronze = { cleanSource: { action: 'move', moveTo: 's3://archive/x', retentionDays: 1 } };
    const left = setup({ bronze, log, cleaner: new Cleaner({ left: ['in/b.json'] }) });
    left.commit(1, { 'in/a.json': '{"id":1}\n', 'in/b.json': '{"id":2}\n' });
    const ok = await left.handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(ok.batchItemFailures).toEqual([]);
    expect(total(left.metrics, METRIC.sinkFilesCleaned)).toBe(1);
    expect(total(left.metrics, METRIC.sinkFilesLeft)).toBe(1);
    expect(warnings).toContainEqual({
      message: 'cleanSource left a landing file in place',
      extra: { table: 't', file: 's3://landing/in/b.json', reason: '412' },
    });

    const failing = setup({ bronze, cleaner: new Cleaner({ fail: 'in/a.json' }) });
    failing.commit(1, { 'in/a.json': '{"id":1}\n' });
    const response = await failing.handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });
    // The Delta version is written and the message acknowledged; the clean is retried by the next run.
    expect(response.batchItemFailures).toEqual([]);
    expect(total(failing.metrics, METRIC.sinkVersions)).toBe(1);
    expect(total(failing.metrics, METRIC.sinkCleanErrors)).toBe(1);
    expect(total(failing.metrics, METRIC.sinkErrors)).toBeUndefined();
  });

  it('counts a Glue catalog update that failed (the run still succeeds), and none once the next run repaired it', async () => {
    const glue = new MemoryCatalog();
    const { handler, metrics, commit } = setup({ catalog: glue });
    commit(1, { 'in/a.json': '{"id":1}\n' });
    glue.failNext = 1;
    const first = await handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(first.batchItemFailures).toEqual([]);
    expect(total(metrics, METRIC.sinkVersions)).toBe(1);
    expect(total(metrics, METRIC.sinkCatalogErrors)).toBe(1);
    expect(total(metrics, METRIC.sinkErrors)).toBeUndefined();
    // The next run, with nothing to write, repairs the entry: no further error.
    await handler(scheduled('2026-12-30T00:01:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    expect(total(metrics, METRIC.sinkCatalogErrors)).toBe(1);
    expect(glue.entry('db', 't')).toBeDefined();
  });

  it('counts symlink manifests that could not be written (the run still succeeds), and none once the next run repaired them', async () => {
    const manifests = new MemoryManifests();
    const { handler, metrics, commit } = setup({ bronze: { symlinkManifest: true }, manifests });
    commit(1, { 'in/a.json': '{"id":1}\n' });
    manifests.failNext = 1;
    const first = await handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(first.batchItemFailures).toEqual([]);
    expect(total(metrics, METRIC.sinkVersions)).toBe(1);
    expect(total(metrics, METRIC.sinkManifestErrors)).toBe(1);
    expect(total(metrics, METRIC.sinkErrors)).toBeUndefined();
    // The next run, with nothing to write, writes them: no further error.
    await handler(scheduled('2026-12-30T00:01:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    expect(total(metrics, METRIC.sinkManifestErrors)).toBe(1);
    expect(manifests.lines('')).toHaveLength(1);
  });

  it('counts a catalog name another table holds as a catalog error, every run, until it is freed', async () => {
    const glue = new MemoryCatalog();
    glue.put('db', { Name: 't', Parameters: { owner: 'someone' } } as never, 't');
    const { handler, metrics, commit } = setup({ catalog: glue });
    commit(1, { 'in/a.json': '{"id":1}\n' });
    await handler(scheduled('2026-12-30T00:00:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    await handler(scheduled('2026-12-30T00:01:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    expect(total(metrics, METRIC.sinkCatalogErrors)).toBe(2);
  });

  it('counts and warns of each landing file a version could not read, with the reason', async () => {
    const warnings: { message: string; extra?: Record<string, unknown> }[] = [];
    const log: Log = { ...silentLog, warn: (message, extra) => warnings.push({ message, extra }) };
    const { handler, metrics, commit, sources } = setup({ log });
    commit(1, { 'in/a.json': '{"id":1}\n', 'in/gone.json': '{"id":2}\n' });
    // Deleted after its event, before the sink read it (404 NoSuchKey): no rows to give, the version goes on.
    sources.objects.delete('in/gone.json');

    const response = await handler(scheduled('2026-12-30T00:00:00Z'), {
      getRemainingTimeInMillis: () => 900_000,
    });

    expect(response.batchItemFailures).toEqual([]);
    expect(total(metrics, METRIC.sinkVersions)).toBe(1);
    expect(total(metrics, METRIC.sinkSourcesMissing)).toBe(1);
    expect(warnings).toEqual([
      {
        message: 'bronze landing file missing',
        extra: { table: 't', manifestVersion: 1, file: 's3://landing/in/gone.json', reason: 'deleted' },
      },
    ]);
  });

  it('reports the versions still behind the committed head when the time budget runs out', async () => {
    // Each manifest read takes 40 s of the clock.
    let t = 0;
    const { handler, metrics, commit } = setup({
      now: () => t,
      onManifestRead: () => {
        t += 40_000;
      },
    });
    for (const v of [1, 2, 3, 4]) commit(v, { [`in/${v}.json`]: '{"id":1}\n' });

    // 120 s left less the 60 s kept back: the clock passes the deadline after the first version.
    await handler(sinkEvent([JSON.stringify({ table: 't' })]), { getRemainingTimeInMillis: () => 120_000 });

    expect(total(metrics, METRIC.sinkVersions)).toBe(1);
    expect(total(metrics, METRIC.sinkBehind)).toBe(3);
  });

  it('names the table it left behind in a warning, which the metric (no table dimension) cannot', async () => {
    let t = 0;
    const warnings: { message: string; extra?: Record<string, unknown> }[] = [];
    const log: Log = { ...silentLog, warn: (message, extra) => warnings.push({ message, extra }) };
    const { handler, commit } = setup({
      now: () => t,
      onManifestRead: () => {
        t += 40_000;
      },
      log,
    });
    for (const v of [1, 2, 3, 4]) commit(v, { [`in/${v}.json`]: '{"id":1}\n' });

    await handler(sinkEvent([JSON.stringify({ table: 't' })]), { getRemainingTimeInMillis: () => 120_000 });

    // The runbook's Logs Insights query (docs/bronze.md "Metrics") filters on this message and these fields.
    expect(warnings).toEqual([
      { message: 'bronze sink behind', extra: { table: 't', versionsBehind: 3, deltaVersion: 0 } },
    ]);
  });

  it('warns of nothing when it caught up', async () => {
    const warnings: string[] = [];
    const log: Log = { ...silentLog, warn: (message) => warnings.push(message) };
    const { handler, commit } = setup({ log });
    commit(1, { 'in/a.json': '{"id":1}\n' });
    await handler(sinkEvent([JSON.stringify({ table: 't' })]), { getRemainingTimeInMillis: () => 900_000 });
    expect(warnings).toEqual([]);
  });

  it('counts a failed run as an error', async () => {
    const { handler, metrics } = setup();
    const response = await handler(sinkEvent(['not json']), { getRemainingTimeInMillis: () => 900_000 });
    expect(response.batchItemFailures).toHaveLength(1);
    expect(total(metrics, METRIC.sinkErrors)).toBe(1);
  });
});

describe('a scheduled nudge', () => {
  it('catches up a table whose last trigger was lost, with no commit needed', async () => {
    const { handler, delta, commit } = setup();
    commit(1, { 'in/a.json': '{"id":1}\n' });
    // Version 1's BatchCommitted never reached the queue: only the schedule's message arrives.
    await handler(scheduled('2026-12-30T00:15:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    expect([...delta.commits.keys()]).toEqual([0]);
  });

  it('on a table that is up to date reads its cursor and one absent manifest, and writes nothing', async () => {
    const { handler, delta, cursors, metrics, commit, reads } = setup();
    commit(1, { 'in/a.json': '{"id":1}\n' });
    await handler(scheduled('2026-12-30T00:00:00Z'), { getRemainingTimeInMillis: () => 900_000 });
    const before = {
      gets: cursors.gets,
      writes: cursors.writes,
      reads: reads(),
      commits: delta.commits.size,
    };
    const files = delta.dataWrites;
    metrics.totals.clear();

    await handler(scheduled('2026-12-30T00:15:00Z'), { getRemainingTimeInMillis: () => 900_000 });

    expect(cursors.gets - before.gets).toBe(1);
    expect(reads() - before.reads).toBe(1);
    expect(cursors.writes).toBe(before.writes);
    expect(delta.dataWrites).toBe(files);
    expect(delta.commits.size).toBe(before.commits);
    expect(total(metrics, METRIC.sinkVersions)).toBe(0);
    expect(total(metrics, METRIC.sinkBehind)).toBe(0);
  });
});

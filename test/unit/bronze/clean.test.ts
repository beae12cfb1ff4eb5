import { describe, expect, it } from 'vitest';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { DEFAULT_PART_LIMITS } from '../../../shared/bronze/write-version.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import type { ConfigError } from '../../../shared/kernel/errors.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { liveRows, MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';
import { after, MemoryCleaner, sinkSetup } from './sink-fixture.ts';

describe('cleanSource', () => {
  it('is validated: move needs moveTo, delete takes none (moved keys and retention: bronze-config-checks)', () => {
    const problems = (cleanSource: unknown, prefix = 'in/', bucket?: string) => {
      try {
        parsePipelineConfig({
          tables: [{ name: 't', prefix, bucket, bronze: { format: 'json', cleanSource } }],
        });
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ action: 'delete' })).toEqual([]);
    expect(problems({ action: 'move', moveTo: 's3://archive/old' })).toEqual([]);
    expect(problems({ action: 'move', moveTo: 's3://archive/in' }, 'in/', 'landing')).toEqual([]);
    // Moved keys are <moveTo prefix>/<source bucket>/<key>: back under the table's own prefix here.
    expect(problems({ action: 'move', moveTo: 's3://landing' }, 'landing/', 'landing').join()).toContain(
      'ingested again',
    );
    expect(problems({ action: 'move' }).join()).toContain('cleanSource.moveTo');
    expect(problems({ action: 'delete', moveTo: 's3://a/b' }).join()).toContain('only for action');
    expect(problems({ action: 'drop', retentionDays: -1 }).join()).toMatch(/action[\s\S]*retentionDays/);
  });

  it('deletes only files of versions in the Delta table and past the retention, in version order', async () => {
    const t = sinkSetup({ cleanSource: { action: 'delete', retentionDays: 8 } });
    t.commit(1);
    t.commit(2);
    t.at(3);
    expect((await t.catchUp()).cleaned).toEqual([]);
    expect(t.sources.objects.size).toBe(4);
    t.commit(3);
    // Versions commit at second 1, 2 and 3 of the day: 8 days and 2.5 s later, 3 is still too young.
    t.at(8, 2500);
    const outcome = await t.catchUp();
    expect(outcome).toMatchObject({ written: [2], cleaned: [1, 2] });
    expect([...t.sources.objects.keys()]).toEqual(['in/3a.json', 'in/3b.json']);
    expect(await t.cursors.getCleaned('t')).toBe(2);
  });

  it('never cleans a file whose version the sink has not written yet', async () => {
    const t = sinkSetup({ cleanSource: { action: 'delete', retentionDays: 8 } });
    t.commit(1);
    t.at(9);
    t.cleaner.failAfter = 0;
    // The sink itself works (version 0 is written), cleaning fails (isolated: the run still succeeds and
    // says so); then version 2 arrives.
    expect(await t.catchUp()).toMatchObject({ written: [0], caughtUp: true, cleaned: [], cleanFailed: true });
    t.cleaner.failAfter = Number.POSITIVE_INFINITY;
    t.commit(2);
    expect((await t.catchUp()).cleaned).toEqual([1, 2]);
    expect(t.sources.objects.size).toBe(0);
  });

  it('moves files under moveTo, and a crash part-way repeats the version without losing a file', async () => {
    const t = sinkSetup({ cleanSource: { action: 'move', moveTo: 's3://archive/old', retentionDays: 0 } });
    t.commit(1);
    t.at(1);
    t.cleaner.failAfter = 1;
    expect(await t.catchUp()).toMatchObject({ cleaned: [], cleanFailed: true });
    expect(await t.cursors.getCleaned('t')).toBe(0);
    t.cleaner.failAfter = Number.POSITIVE_INFINITY;
    expect((await t.catchUp()).cleaned).toEqual([1]);
    expect(t.cleaner.calls).toEqual(['move in/1a.json', 'move in/1a.json', 'move in/1b.json']);
    expect(t.cleaner.archive).toEqual([
      's3://archive/old/landing/in/1a.json',
      's3://archive/old/landing/in/1b.json',
    ]);
    expect(t.sources.objects.size).toBe(0);
  });

  it("cleans versions written in parts, with another writer's commits between them, by what every part read", async () => {
    const t = sinkSetup({
      cleanSource: { action: 'delete', retentionDays: 8 },
      parts: { ...DEFAULT_PART_LIMITS, maxFiles: 1 },
    });
    t.commit(1);
    await t.catchUp();
    // Another writer's logged VACUUM at Delta version 2, after version 1's two parts.
    t.delta.commits.set(2, `${JSON.stringify({ commitInfo: { operation: 'VACUUM END' } })}\n`);
    t.commit(2);
    // Deleted after its event: the part that covers it records it missing (never cleaned, nothing to clean).
    t.sources.objects.delete('in/2b.json');
    t.at(9);
    const outcome = await t.catchUp();
    // Version 2's parts at Delta 3 and 4: manifest version v is no longer at Delta version v-1.
    expect(outcome).toMatchObject({ written: [3, 4], cleaned: [1, 2], cleanFailed: false });
    expect(t.cleaner.calls.sort()).toEqual(['delete in/1a.json', 'delete in/1b.json', 'delete in/2a.json']);
    expect(t.sources.objects.size).toBe(0);
  });
});

/** Two bronze tables over `in/`: `t` cleans (delete, 8 days), `audit` does not; versions in 1-file parts. */
function twoTables() {
  const manifests = new Map<string, Manifest>();
  const sources = new MemorySources();
  const cursors = new MemoryCursors();
  const deltas = new Map<string, MemoryDelta>();
  /** The ledger's claims of `audit`: identity -> the manifest version whose batch holds it. */
  const auditClaims = new Map<string, number>();
  let now = after(0);
  const config = parsePipelineConfig({
    tables: [
      {
        name: 't',
        prefix: 'in/',
        bronze: { format: 'json', cleanSource: { action: 'delete', retentionDays: 8 } },
      },
      { name: 'audit', prefix: 'in/', bronze: { format: 'json' } },
    ],
  });
  const sink = new SinkTable({
    config,
    store: { getManifest: async (table, version) => manifests.get(`${table}#${version}`) },
    sources,
    deltaAt: (_bucket, prefix) => {
      const delta = deltas.get(prefix) ?? new MemoryDelta();
      deltas.set(prefix, delta);
      return delta;
    },
    cursors,
    cleaner: new MemoryCleaner(sources),
    claims: {
      committedVersion: async (table, identity) =>
        table === 'audit' ? auditClaims.get(identity) : undefined,
    },
    manifestBucket: 'mb',
    log: silentLog,
    now: () => now,
    parts: { ...DEFAULT_PART_LIMITS, maxFiles: 1 },
  });
  return {
    sources,
    cursors,
    delta: (table: string) => deltas.get(`${table}/_bronze`) ?? new MemoryDelta(),
    /** Manifest version v of `table`, with the landing files `keys` (written now if new). */
    commit(table: string, v: number, keys: string[]) {
      for (const k of keys) if (!sources.objects.has(k)) sources.objects.set(k, `{"k":"${k}"}`);
      const manifest = manifestOf(table, v, keys);
      manifests.set(`${table}#${v}`, manifest);
      if (table === 'audit') for (const f of manifest.files) auditClaims.set(`landing#-#${f.key}`, v);
    },
    catchUp: (table: string) => sink.catchUp(table, Number.POSITIVE_INFINITY),
    at: (days: number) => {
      now = after(days);
    },
  };
}

describe('cleanSource with another table routing the same files', () => {
  it("waits for the other table's cursor to pass the file's manifest version, though its Delta version is further on", async () => {
    const t = twoTables();
    t.commit('audit', 1, ['in/a.json', 'in/b.json']);
    // audit's version 1 in two parts: Delta versions 0 and 1, so its Delta version is its manifest version.
    expect(await t.catchUp('audit')).toMatchObject({ written: [0, 1], versions: [1] });
    expect(await t.cursors.get('audit')).toMatchObject({ manifestVersion: 1, deltaVersion: 1 });
    // audit's version 2 is committed, its sink has not run yet.
    t.commit('audit', 2, ['in/c.json', 'in/d.json']);
    t.commit('t', 1, ['in/a.json', 'in/b.json']);
    t.commit('t', 2, ['in/c.json', 'in/d.json']);
    t.at(9);
    // Version 1's files audit holds; version 2's it does not, whatever "Delta version + 1" would say.
    expect(await t.catchUp('t')).toMatchObject({ versions: [1, 2], cleaned: [1], cleanFailed: false });
    expect([...t.sources.objects.keys()].sort()).toEqual(['in/c.json', 'in/d.json']);
    expect(await t.catchUp('audit')).toMatchObject({ versions: [2], added: { rows: 2, missingSources: 0 } });
    expect(await t.catchUp('t')).toMatchObject({ cleaned: [2] });
    expect(t.sources.objects.size).toBe(0);
    expect((await liveRows(t.delta('audit'))).map((r) => r.k).sort()).toEqual([
      'in/a.json',
      'in/b.json',
      'in/c.json',
      'in/d.json',
    ]);
  });
});

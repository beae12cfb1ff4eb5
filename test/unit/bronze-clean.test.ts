import { describe, expect, it } from 'vitest';
import { archiveKey } from '../../shared/bronze/archive-key.ts';
import type { ArchiveTarget, CleanOutcome, LandingCleaner } from '../../shared/bronze/ports.ts';
import { parsePipelineConfig } from '../../shared/config.ts';
import type { ConfigError } from '../../shared/errors.ts';
import { silentLog } from '../../shared/log.ts';
import type { Manifest } from '../../shared/manifest.ts';
import type { ObjectRef } from '../../shared/model.ts';
import { SinkTable } from '../../shared/usecases/sink.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './bronze-memory.ts';

const DAY = 24 * 60 * 60 * 1000;
/** manifestOf commits version v at 2026-11-30T00:00:0v; "now" is that plus `days`. */
const after = (days: number) => Date.parse('2026-11-30T00:00:00.000Z') + days * DAY;

/** Landing objects as a set of keys; moves land in `archive`. `failAfter` crashes after that many calls. */
class MemoryCleaner implements LandingCleaner {
  readonly calls: string[] = [];
  readonly archive: string[] = [];
  failAfter = Number.POSITIVE_INFINITY;
  constructor(private readonly landing: MemorySources) {}
  private tick() {
    if (this.calls.length >= this.failAfter) throw new Error('crash in cleanSource');
  }
  /** The manifest's write, as S3LandingCleaner names it: a delete conditional on its ETag. */
  private named(ref: ObjectRef): CleanOutcome | undefined {
    if (!this.landing.objects.has(ref.key)) return { kind: 'gone' };
    if (this.landing.objects.eTags.get(ref.key) !== ref.eTag) return { kind: 'left', reason: '412' };
    return undefined;
  }
  async remove(ref: ObjectRef): Promise<CleanOutcome> {
    this.tick();
    this.calls.push(`delete ${ref.key}`);
    const not = this.named(ref);
    if (not) return not;
    this.landing.objects.delete(ref.key);
    return { kind: 'removed' };
  }
  async move(ref: ObjectRef, to: ArchiveTarget): Promise<CleanOutcome> {
    this.tick();
    this.calls.push(`move ${ref.key}`);
    const not = this.named(ref);
    if (not) return not;
    this.archive.push(`s3://${to.bucket}/${archiveKey(ref, to)}`);
    this.landing.objects.delete(ref.key);
    return { kind: 'removed' };
  }
}

function setup(cleanSource: Record<string, unknown>) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const cursors = new MemoryCursors();
  const cleaner = new MemoryCleaner(sources);
  const delta = new MemoryDelta();
  let now = after(0);
  const sink = new SinkTable({
    config: parsePipelineConfig({
      tables: [{ name: 't', prefix: 'in/', bronze: { format: 'json', cleanSource } }],
    }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: () => delta,
    cursors,
    cleaner,
    manifestBucket: 'mb',
    log: silentLog,
    now: () => now,
  });
  const commit = (v: number) => {
    const keys = [`in/${v}a.json`, `in/${v}b.json`];
    for (const k of keys) sources.objects.set(k, '{"a":1}');
    manifests.set(v, manifestOf('t', v, keys));
  };
  return {
    sources,
    cursors,
    cleaner,
    commit,
    catchUp: () => sink.catchUp('t', Number.POSITIVE_INFINITY),
    at: (days: number, ms = 0) => {
      now = after(days) + ms;
    },
  };
}

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
    const t = setup({ action: 'delete', retentionDays: 8 });
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
    const t = setup({ action: 'delete', retentionDays: 8 });
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
    const t = setup({ action: 'move', moveTo: 's3://archive/old', retentionDays: 0 });
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
});

import { archiveKey } from '../../../shared/bronze/archive-key.ts';
import type {
  ArchiveTarget,
  CleanOutcome,
  LandingCleaner,
  SourceObjects,
} from '../../../shared/bronze/ports.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import type { PartLimits } from '../../../shared/bronze/write-version.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

const DAY = 24 * 60 * 60 * 1000;
/** manifestOf commits version v at 2026-11-30T00:00:0v; "now" is that plus `days`. */
export const after = (days: number) => Date.parse('2026-11-30T00:00:00.000Z') + days * DAY;

/** Landing objects as a set of keys; moves land in `archive`. `failAfter` crashes after that many calls. */
export class MemoryCleaner implements LandingCleaner {
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

/**
 * One bronze table `t` over `in/`, its sink on the in-memory fakes. `commit(v)` publishes manifest version v
 * with the landing files `in/<v>a.json` and `in/<v>b.json` (or `keys`), one JSON row each.
 */
export function sinkSetup(
  options: {
    readonly cleanSource?: Record<string, unknown>;
    /** More of the table's bronze config. */
    readonly bronze?: Record<string, unknown>;
    readonly parts?: PartLimits;
    readonly allowOverwrites?: boolean;
    /** The landing reads the sink makes, given the fake's (to act between them). */
    readonly sources?: (landing: MemorySources) => SourceObjects;
  } = {},
) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const cursors = new MemoryCursors();
  const cleaner = new MemoryCleaner(sources);
  const delta = new MemoryDelta();
  let now = after(0);
  const sink = new SinkTable({
    config: parsePipelineConfig({
      tables: [
        {
          name: 't',
          prefix: 'in/',
          allowOverwrites: options.allowOverwrites,
          bronze: { format: 'json', cleanSource: options.cleanSource, ...options.bronze },
        },
      ],
    }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources: options.sources?.(sources) ?? sources,
    deltaAt: () => delta,
    cursors,
    cleaner,
    manifestBucket: 'mb',
    log: silentLog,
    ...systemClock,
    now: () => now,
    parts: options.parts,
  });
  const commit = (v: number, keys = [`in/${v}a.json`, `in/${v}b.json`]) => {
    for (const k of keys) sources.objects.set(k, `{"k":"${k}"}`);
    manifests.set(v, manifestOf('t', v, keys));
  };
  return {
    sources,
    cursors,
    cleaner,
    delta,
    commit,
    /** A run of the sink that starts no part after `deadline` (epoch ms; it always writes one). */
    catchUp: (deadline = Number.POSITIVE_INFINITY) => sink.catchUp('t', deadline),
    at: (days: number, ms = 0) => {
      now = after(days) + ms;
    },
  };
}

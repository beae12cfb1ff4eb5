/**
 * A bronze table of many small versions, as the sink writes it, built in memory in seconds: manifest
 * versions 1..n, one landing file each, caught up by the real `SinkTable` (one Delta commit a version,
 * checkpoints every `checkpointInterval`) over the in-memory fakes. What a table that has been taking a file
 * a minute for a day looks like, for optimize and vacuum to work on and engines to read.
 */
import type { BronzeConfigInput } from '../../shared/bronze/config.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../shared/ingestion/manifest.ts';
import { systemClock } from '../../shared/kernel/clock.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from '../unit/bronze/memory.ts';

export const SMALL_FILES_TABLE = 't';

/** The landing key of manifest version `v`'s one file. */
export const smallFileKey = (v: number) => `in/f${String(v).padStart(5, '0')}.jsonl`;

export async function sinkSmallFiles(options: {
  readonly versions: number;
  /** Manifest version v's landing file (JSON lines). */
  readonly body: (v: number) => string;
  readonly bronze: BronzeConfigInput;
}): Promise<MemoryDelta> {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const sink = new SinkTable({
    config: parsePipelineConfig({
      tables: [{ name: SMALL_FILES_TABLE, prefix: 'in/', bronze: options.bronze }],
    }),
    store: { getManifest: async (_table, version) => manifests.get(version) },
    sources,
    deltaAt: () => delta,
    cursors: new MemoryCursors(),
    manifestBucket: 'mb',
    log: silentLog,
    ...systemClock,
  });
  for (let v = 1; v <= options.versions; v++) {
    sources.objects.set(smallFileKey(v), options.body(v));
    manifests.set(v, manifestOf(SMALL_FILES_TABLE, v, [smallFileKey(v)]));
  }
  const outcome = await sink.catchUp(SMALL_FILES_TABLE, Number.POSITIVE_INFINITY);
  if (!outcome.caughtUp || outcome.written.length !== options.versions)
    throw new Error(`the sink wrote ${outcome.written.length} of ${options.versions} versions`);
  return delta;
}

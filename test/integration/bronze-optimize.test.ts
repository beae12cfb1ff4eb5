// A bronze table of 1,000 versions of small files (the real sink's, in memory), optimized and vacuumed by
// Inlet, read back by delta-rs (the venv's `deltalake`) from a local directory: the latest version is one
// large file with the same rows, time travel within the retention reads, and vacuum removed the files only
// versions before it named. `npm run test:engines` reads the same from S3 with Spark too (optimized-tables.ts).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { venvPython } from '../../local/paths.ts';
import { logKey } from '../../shared/bronze/delta-log.ts';
import { optimizeTable } from '../../shared/bronze/optimize.ts';
import { vacuumTable } from '../../shared/bronze/vacuum.ts';
import { systemClock } from '../../shared/kernel/clock.ts';
import { SMALL_FILES_TABLE, sinkSmallFiles } from '../support/small-files-table.ts';
import type { MemoryDelta } from '../unit/bronze/memory.ts';
import { memoryTableFiles } from '../unit/bronze/table-files.ts';

const run = promisify(execFile);
const here = (p: string) => new URL(p, import.meta.url).pathname;
const DAY = 86_400_000;
const VERSIONS = 1000;

/** The table as a directory delta-rs can open: data files and `_delta_log/`. */
function exportTable(delta: MemoryDelta, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, '_delta_log'), { recursive: true });
  for (const [path, bytes] of delta.files) writeFileSync(join(dir, path), bytes);
  for (const [version, body] of delta.commits) writeFileSync(join(dir, logKey(version)), body);
  for (const [name, bytes] of delta.logFiles) writeFileSync(join(dir, '_delta_log', name), bytes);
}

interface Read {
  version: number;
  files: number;
  rows: string[];
  at: Record<string, { rows?: string[]; error?: string }>;
}

async function readWithDeltaRs(dir: string, versions: number[]): Promise<Read> {
  const { stdout } = await run(
    venvPython,
    [here('./bronze_optimized.py'), dir, '--versions', versions.join(',')],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as Read;
}

describe('an optimized and vacuumed bronze table, read by delta-rs', () => {
  it('reads 1,000 small versions as one large file with the same rows; time travel within the retention still works', async () => {
    const delta = await sinkSmallFiles({
      versions: VERSIONS,
      body: (v) => `{"id":${v},"name":"n${v}"}\n{"id":${v + 0.5}}\n`,
      bronze: { format: 'jsonl' },
    });
    const dir = mkdtempSync(join(tmpdir(), 'inlet-optimize-'));
    const table = join(dir, 'table');
    try {
      exportTable(delta, table);
      const before = await readWithDeltaRs(table, []);
      expect(before).toMatchObject({ version: VERSIONS - 1, files: VERSIONS });
      expect(before.rows).toHaveLength(2 * VERSIONS);

      const t0 = Date.now();
      const uploaded = new Map([...delta.files.keys()].map((p) => [p, t0]));
      const files = memoryTableFiles(delta, (p) => uploaded.get(p) ?? t0);
      const optimized = await optimizeTable(
        { ...systemClock, delta, files, newId: () => 'opt' },
        { table: SMALL_FILES_TABLE, targetFileBytes: 100 * 1024 * 1024, finishBy: Number.POSITIVE_INFINITY },
      );
      expect(optimized).toMatchObject({ commits: 1, filesRemoved: VERSIONS, filesAdded: 1 });
      const vacuumedEarly = await vacuumTable(
        { now: () => t0 + DAY, delta, files },
        { table: SMALL_FILES_TABLE, retentionMs: 7 * DAY },
      );
      expect(vacuumedEarly.filesDeleted).toBe(0);
      exportTable(delta, table);
      const after = await readWithDeltaRs(table, [0, VERSIONS - 1, VERSIONS]);
      expect(after.version).toBe(VERSIONS);
      expect(after.files).toBe(1);
      expect(after.rows).toEqual(before.rows);
      // Within the retention: the versions before optimize still read, from their small files.
      expect(after.at[String(VERSIONS - 1)]?.rows).toEqual(before.rows);
      expect(after.at['0']?.rows).toHaveLength(2);
      expect(after.at[String(VERSIONS)]?.rows).toEqual(before.rows);

      // Eight days later: vacuum deletes the 1,000 small files; the optimized version and the latest read.
      const vacuumed = await vacuumTable(
        { now: () => t0 + 8 * DAY, delta, files },
        { table: SMALL_FILES_TABLE, retentionMs: 7 * DAY },
      );
      expect(vacuumed.filesDeleted).toBe(VERSIONS);
      exportTable(delta, table);
      const late = await readWithDeltaRs(table, [VERSIONS - 1, VERSIONS]);
      expect(late.rows).toEqual(before.rows);
      expect(late.at[String(VERSIONS)]?.rows).toEqual(before.rows);
      // Past the retention, the versions before optimize name files that are gone (as Delta's VACUUM leaves them).
      expect(late.at[String(VERSIONS - 1)]?.error).toBeDefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});

// Review F13: the checkpoint state grows with the table. Rewriting the checkpoint of a table of 50,000 files
// must not need the table in memory: a Node heap of 96 MB writes it (the old checkpoint, the whole state and
// every row at once, died of it even at 128 MB). And the log is listed from the last checkpoint on, however
// old the table.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointWriter } from '../../../shared/bronze/checkpoint.ts';
import type { AddAction } from '../../../shared/bronze/log-state.ts';
import { SinkTable } from '../../../shared/bronze/sink.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf } from './memory.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'inlet-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILES = 50_000;
const add = (i: number): AddAction => ({
  path: `part-${String(i).padStart(20, '0')}-00000-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9.snappy.parquet`,
  partitionValues: {},
  size: 4096 + i,
  modificationTime: 1_767_225_600_000 + i,
  dataChange: true,
  stats: JSON.stringify({ numRecords: 1 + (i % 100) }),
  tags: { 'inlet.rescuedRows': String(i % 3) },
});

describe('a checkpoint of a table of 50,000 files', () => {
  it('is rewritten in a 96 MB heap: streamed from the previous one, a row group at a time', async () => {
    const chunks: Uint8Array[] = [];
    const writer = new CheckpointWriter({
      write: async (chunk) => void chunks.push(chunk),
      close: async () => undefined,
      abort: async () => undefined,
    });
    const schemaString = JSON.stringify({
      type: 'struct',
      fields: [{ name: 'id', type: 'long', nullable: true, metadata: {} }],
    });
    await writer.write({ protocol: { minReaderVersion: 1, minWriterVersion: 2 } });
    await writer.write({
      metaData: { id: 'x', format: { provider: 'parquet' }, schemaString, partitionColumns: [] },
    });
    await writer.write({ txn: { appId: 'inlet-bronze-t', version: 100 } });
    for (let i = 0; i < FILES; i++) await writer.write({ add: add(i) });
    await writer.finish();
    const path = join(dir, 'checkpoint.parquet');
    writeFileSync(path, Buffer.concat(chunks));
    const next = [
      JSON.stringify({ commitInfo: {} }),
      JSON.stringify({ txn: { appId: 'inlet-bronze-t', version: 101 } }),
      JSON.stringify({ add: add(FILES) }),
    ].join('\n');

    const child = fileURLToPath(new URL('./checkpoint-child.ts', import.meta.url));
    const { stdout } = await run(
      process.execPath,
      ['--max-old-space-size=96', '--import', 'tsx', child, path, '99', next],
      { maxBuffer: 1024 * 1024 },
    );
    expect(stdout.trim()).toMatch(new RegExp(`^ok ${FILES + 1} \\d+$`));
  }, 240_000);
});

describe('the log is listed from the last checkpoint on', () => {
  it('however many versions the table has', async () => {
    const manifests = new Map<number, Manifest>();
    const sources = new MemorySources();
    const delta = new MemoryDelta();
    const listed: number[] = [];
    const list = delta.listCommits.bind(delta);
    delta.listCommits = async (after) => {
      const versions = await list(after);
      listed.push(versions.length);
      return versions;
    };
    const sink = new SinkTable({
      config: parsePipelineConfig({
        tables: [{ name: 't', bronze: { format: 'json', checkpointInterval: 10 } }],
      }),
      store: { getManifest: async (_table, version) => manifests.get(version) },
      sources,
      deltaAt: () => delta,
      cursors: new MemoryCursors(),
      manifestBucket: 'mb',
      log: silentLog,
      now: () => 0,
    });
    for (let v = 1; v <= 61; v++) {
      sources.objects.set(`f${v}.json`, `{"a":${v}}\n`);
      manifests.set(v, manifestOf('t', v, [`f${v}.json`]));
      // Until the first checkpoint (Delta version 10) there is nothing to list from.
      if (v === 12) listed.length = 0;
      await sink.catchUp('t', Number.POSITIVE_INFINITY);
    }
    // A run lists the commits after the last checkpoint (at most 10 here), never the 61 the table has.
    expect(Math.max(...listed)).toBeLessThanOrEqual(10);
    expect(delta.commits.size).toBe(61);
  }, 120_000);
});

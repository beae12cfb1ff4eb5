import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import type { AddAction } from '../../../shared/bronze/delta-actions.ts';
import { optimizeTable, planBins } from '../../../shared/bronze/optimize.ts';
import { parquetRecords } from '../../../shared/bronze/parquet-records.ts';
import { dataFileKeyOf } from '../../../shared/bronze/partition-paths.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { systemClock } from '../../../shared/kernel/clock.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';
import { memoryTableFiles } from './table-files.ts';

const TABLE = 't';
const REGIONS = ['eu west', 'us/east', '100%'];

/** A table partitioned by `region`: each version one landing file, a row in each region (three small files). */
async function partitionedSmallFiles(versions: number) {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const config = bronzeConfigSchema.parse({
    format: 'jsonl',
    schemaHints: { region: 'string' },
    partitionBy: ['region'],
  });
  let schema: TableSchema | undefined;
  for (let v = 1; v <= versions; v++) {
    const key = `f${v}.jsonl`;
    sources.objects.set(
      key,
      REGIONS.map((region, i) => JSON.stringify({ id: v * 10 + i, region })).join('\n'),
    );
    const result = await writeVersion(
      { sources, delta },
      { table: TABLE, location: 's3://b/p', config, manifest: manifestOf(TABLE, v, [key]), schema },
    );
    schema = result.schema;
  }
  return delta;
}

/** Every live row with its file's partition values, in a comparable form. */
async function liveRowsWithPartitions(delta: MemoryDelta): Promise<string[]> {
  const { state } = await loadSnapshot(delta);
  const files = memoryTableFiles(delta);
  const out: string[] = [];
  for (const add of state.adds.values())
    for await (const r of parquetRecords(await files.open(dataFileKeyOf(add.path))))
      if (r.kind === 'row')
        out.push(
          JSON.stringify({ ...r.values, ...add.partitionValues }, (_k, v) =>
            typeof v === 'bigint' ? `${v}n` : v,
          ),
        );
  return out.sort();
}

const options = { table: TABLE, targetFileBytes: 1 << 20, finishBy: Number.POSITIVE_INFINITY };

describe('optimize of a partitioned table', () => {
  it('bins small files within each partition, never across', () => {
    const add = (path: string, region: string, modificationTime: number): AddAction => ({
      path,
      size: 10,
      modificationTime,
      partitionValues: { region },
      dataChange: true,
    });
    const bins = planBins(
      [add('a1', 'a', 1), add('b1', 'b', 1), add('a2', 'a', 2), add('b2', 'b', 2), add('c1', 'c', 1)],
      100,
    );
    expect(bins.map((b) => b.map((a) => a.path))).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
  });

  it("rewrites each partition's small files as one file under its directory, with its partitionValues and stats", async () => {
    const delta = await partitionedSmallFiles(12);
    const before = await liveRowsWithPartitions(delta);
    expect((await loadSnapshot(delta)).state.adds.size).toBe(36);

    const result = await optimizeTable(
      { ...systemClock, delta, files: memoryTableFiles(delta), newId: () => 'opt' },
      options,
    );

    expect(result).toMatchObject({ commits: 3, filesRemoved: 36, filesAdded: 3, binsSkipped: 0 });
    const { state } = await loadSnapshot(delta);
    const adds = [...state.adds.values()];
    expect(adds.map((a) => a.partitionValues.region).sort()).toEqual([...REGIONS].sort());
    for (const add of adds) {
      const region = add.partitionValues.region as string;
      // Hive-style, as the sink names them: Spark's escaping in the key, the key URI-encoded in the log.
      const directory = {
        'eu west': 'region=eu%20west/',
        'us/east': 'region=us%252Feast/',
        '100%': 'region=100%2525/',
      }[region];
      expect(add.path.startsWith(directory as string), add.path).toBe(true);
      expect(add.dataChange).toBe(false);
      const stats = JSON.parse(add.stats ?? '{}');
      expect(stats.numRecords).toBe(12);
      // Partition columns are in the log, not in the file, and have no stats (as the writer leaves them out).
      expect(Object.keys(stats.minValues)).not.toContain('region');
      expect(stats.minValues._manifest_version).toBe(1);
      expect(stats.maxValues._manifest_version).toBe(12);
    }
    expect(await liveRowsWithPartitions(delta)).toEqual(before);
  });
});

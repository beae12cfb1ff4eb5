import { describe, expect, it } from 'vitest';
import { bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { typeText } from '../../../shared/bronze/delta-types.ts';
import { readBronzeTable } from '../../../shared/bronze/table-state.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';

/** One version of two rows written to a fresh table with `bronze`. */
async function oneVersion(bronze: Record<string, unknown>) {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  sources.objects.set('o/a.json', '{"id":1,"region":"eu"}\n{"id":2,"region":"us"}\n');
  await writeVersion(
    { sources, delta },
    {
      table: 't',
      location: 's3://b/p',
      config: bronzeConfigSchema.parse({ format: 'json', ...bronze }),
      manifest: manifestOf('t', 1, ['o/a.json']),
      schema: undefined,
    },
  );
  return delta;
}

describe('a bronze table as `inlet table` reads it', () => {
  it('lists every column a reader sees, the ingestion date of a table partitioned by it included', async () => {
    const delta = await oneVersion({ partitionBy: ['_ingest_date'] });
    const state = await readBronzeTable('t', delta);
    expect(state.columns.map((c) => `${c.name} ${typeText(c.type)}`)).toEqual([
      'id long',
      'region string',
      '_rescued_data string',
      '_source_file string',
      '_manifest_version long',
      '_ingest_date date',
    ]);
  });

  it('lists no ingestion date for an unpartitioned table, and a partition column once, where the schema has it', async () => {
    const plain = await readBronzeTable('t', await oneVersion({}));
    expect(plain.columns.map((c) => c.name)).not.toContain('_ingest_date');
    const byRegion = await readBronzeTable(
      't',
      await oneVersion({ partitionBy: ['region'], schemaHints: { region: 'string' } }),
    );
    expect(byRegion.columns.filter((c) => c.name === 'region')).toHaveLength(1);
  });

  it('counts the live files and their bytes', async () => {
    const delta = await oneVersion({ partitionBy: ['region'], schemaHints: { region: 'string' } });
    const state = await readBronzeTable('t', delta);
    expect(state.files).toBe(2);
    const bytes = [...delta.files.values()].reduce((sum, b) => sum + b.byteLength, 0);
    expect(state.bytes).toBe(bytes);
  });
});

import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { ConfigError } from '../../../shared/kernel/errors.ts';

const parse = (bronze: Record<string, unknown>) =>
  parsePipelineConfig({ tables: [{ name: 'orders', bronze: { format: 'jsonl', ...bronze } }] }).tables[0]
    ?.bronze;

function problemsOf(bronze: Record<string, unknown>): string[] {
  try {
    parse(bronze);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('partitionBy in a bronze config', () => {
  it('is unpartitioned by default, and takes hinted data columns and the ingestion date', () => {
    expect(parse({})?.partitionBy).toBeUndefined();
    expect(
      parse({ schemaHints: { region: 'string', day: 'long' }, partitionBy: ['region', '_ingest_date'] })
        ?.partitionBy,
    ).toEqual(['region', '_ingest_date']);
  });

  it("takes a partition column hinted in Spark DDL's other spellings of a partitionable type", () => {
    expect(
      parse({
        schemaHints: { day: 'bigint', shard: 'INT', kind: 'STRING' },
        partitionBy: ['day', 'shard', 'kind'],
      })?.partitionBy,
    ).toEqual(['day', 'shard', 'kind']);
    expect(problemsOf({ schemaHints: { amount: 'decimal(10,2)' }, partitionBy: ['amount'] })).toEqual([
      expect.stringMatching(/partitionBy\.0: 'amount' is hinted decimal\(10,2\)/),
    ]);
  });

  it('refuses every column that cannot work, each problem listed at once', () => {
    const problems = problemsOf({
      schemaHints: { ok: 'string', ratio: 'double', Ok2: 'string' },
      partitionBy: [
        'ok',
        'unknown',
        '_rescued_data',
        '_source_file',
        '_manifest_version',
        'geo.zip',
        'ratio',
        'OK',
        'bad name',
        '_Ingest_Date',
      ],
    }).join('\n');
    expect(problems).toMatch(/partitionBy: at most 3 partition columns/);
    expect(problems).toMatch(/'unknown' has no schemaHints entry/);
    expect(problems).toMatch(/'_rescued_data' .*rescued/);
    expect(problems).toMatch(/'_source_file' .*one partition per landing file/);
    expect(problems).toMatch(/'_manifest_version' .*one partition per version/);
    expect(problems).toMatch(/'geo.zip' .*nested field/);
    expect(problems).toMatch(/'ratio' is hinted double/);
    expect(problems).toMatch(/'OK' and 'ok' differ only by case/);
    expect(problems).toMatch(/'bad name': Delta cannot store/);
    expect(problems).toMatch(/'_Ingest_Date': the ingestion date column is '_ingest_date'/);
  });

  it('refuses a hint named like the ingestion date column of a table partitioned by it', () => {
    expect(
      problemsOf({ schemaHints: { _ingest_date: 'string' }, partitionBy: ['_ingest_date'] }).join('\n'),
    ).toMatch(/schemaHints._ingest_date: '_ingest_date' is the ingestion date/);
    // Without the partition it is a data column like any other.
    expect(parse({ schemaHints: { _ingest_date: 'string' } })?.schemaHints).toEqual({
      _ingest_date: 'string',
    });
  });
});

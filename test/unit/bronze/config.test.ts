import { describe, expect, it } from 'vitest';
import { bronzeLocation } from '../../../shared/bronze/config.ts';
import { configuredRetentionMs } from '../../../shared/bronze/maintenance-config.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { ConfigError } from '../../../shared/kernel/errors.ts';

describe('bronze table config', () => {
  it('is off unless a table asks for it, and fills defaults when it does', () => {
    const config = parsePipelineConfig({
      tables: [{ name: 'plain' }, { name: 'orders', bronze: { format: 'jsonl' } }],
    });
    expect(config.tables[0]?.bronze).toBeUndefined();
    expect(config.tables[1]?.bronze).toEqual({
      format: 'jsonl',
      schemaHints: {},
      evolution: 'addNewColumns',
      typeWidening: false,
      nested: 'typed',
      maxFileBytes: 32 * 1024 * 1024,
      checkpointInterval: 100,
      nudgeEveryMinutes: 15,
      catalog: true,
      symlinkManifest: false,
      maintenance: { everyHours: 24, targetFileBytes: 104_857_600, retentionHours: 168 },
    });
  });

  it('maintains every bronze table by default (daily optimize, vacuum after 7 days); false turns it off', () => {
    const config = parsePipelineConfig({
      tables: [
        { name: 'orders', bronze: { format: 'jsonl' } },
        { name: 'quiet', bronze: { format: 'jsonl', maintenance: false } },
        { name: 'hourly', bronze: { format: 'jsonl', maintenance: { everyHours: 1 } } },
      ],
    });
    expect(config.tables.map((t) => t.bronze?.maintenance)).toEqual([
      { everyHours: 24, targetFileBytes: 104_857_600, retentionHours: 168 },
      false,
      { everyHours: 1, targetFileBytes: 104_857_600, retentionHours: 168 },
    ]);
    // Checkpoints keep tombstones for the retention: with maintenance off (another tool vacuums), Delta's week.
    expect(config.tables.map((t) => configuredRetentionMs(t.bronze?.maintenance))).toEqual([
      168 * 3_600_000,
      168 * 3_600_000,
      168 * 3_600_000,
    ]);
    expect(() =>
      parsePipelineConfig({ tables: [{ name: 'o', bronze: { format: 'jsonl', maintenance: true } }] }),
    ).toThrow(ConfigError);
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      parsePipelineConfig({
        tables: [
          {
            name: 'orders',
            bronze: {
              format: 'xml',
              evolution: 'sometimes',
              schemaHints: { a: 'decimals', _rescued_data: 'string' },
              location: 'http://x',
              maxFileBytes: 10,
              checkpointInterval: 0,
            },
          },
        ],
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const field of [
      'format',
      'evolution',
      'schemaHints.a',
      'location',
      'maxFileBytes',
      'checkpointInterval',
    ])
      expect(problems).toContain(`tables.0.bronze.${field}`);
  });

  it('takes a checkpoint interval of whole versions from 1 to 10000', () => {
    const interval = (checkpointInterval: unknown) =>
      parsePipelineConfig({ tables: [{ name: 'o', bronze: { format: 'csv', checkpointInterval } }] })
        .tables[0]?.bronze?.checkpointInterval;
    expect(interval(10)).toBe(10);
    for (const bad of [0, 2.5, 10_001, '10'])
      expect(() => interval(bad)).toThrow(/tables\.0\.bronze\.checkpointInterval/);
  });

  it('takes a nudge schedule of whole minutes up to a day, 0 for none', () => {
    const every = (nudgeEveryMinutes: unknown) =>
      parsePipelineConfig({ tables: [{ name: 'o', bronze: { format: 'csv', nudgeEveryMinutes } }] }).tables[0]
        ?.bronze?.nudgeEveryMinutes;
    expect(every(0)).toBe(0);
    expect(every(60)).toBe(60);
    for (const bad of [-1, 1.5, 1441, '15'])
      expect(() => every(bad)).toThrow(/tables\.0\.bronze\.nudgeEveryMinutes/);
  });

  it('rejects a hint on a column the sink adds', () => {
    expect(() =>
      parsePipelineConfig({
        tables: [{ name: 'o', bronze: { format: 'csv', schemaHints: { _source_file: 'string' } } }],
      }),
    ).toThrow(/_source_file' is a column the sink adds/);
  });

  it('defaults the location under the manifest bucket', () => {
    expect(bronzeLocation('orders', {}, 'mb')).toEqual({
      bucket: 'mb',
      prefix: 'orders/_bronze',
    });
    expect(bronzeLocation('o', { location: 's3://lake/bronze/o/' }, 'mb')).toEqual({
      bucket: 'lake',
      prefix: 'bronze/o',
    });
  });

  it('takes schemaHints in Spark DDL for every Delta type, and says why one is refused', () => {
    const hints = (format: string, schemaHints: Record<string, string>) =>
      parsePipelineConfig({ tables: [{ name: 'o', bronze: { format, schemaHints } }] }).tables[0]?.bronze
        ?.schemaHints;
    const all = {
      a: 'timestamp',
      b: 'timestamp_ntz',
      c: 'date',
      d: 'decimal(12,2)',
      e: 'binary',
      f: 'int',
      g: 'short',
      h: 'tinyint',
      i: 'float',
      j: 'struct<x:long,y:array<string>>',
      k: 'map<string,double>',
    };
    expect(hints('jsonl', all)).toEqual(all);
    const problem = (format: string, schemaHints: Record<string, string>) => {
      try {
        hints(format, schemaHints);
      } catch (e) {
        return (e as ConfigError).problems.join('\n');
      }
      return undefined;
    };
    expect(problem('jsonl', { a: 'decimal(40,2)' })).toMatch(/schemaHints\.a.*precision 1-38/);
    // A CSV field is text: it has no nested value to put in a struct, array or map.
    expect(problem('csv', { j: 'array<long>' })).toMatch(/schemaHints\.j.*CSV/);
    expect(problem('csv', { j: 'date' })).toBeUndefined();
  });

  it('keeps JSON objects and arrays as typed columns unless nested is jsonText', () => {
    const nested = (value: unknown) =>
      parsePipelineConfig({ tables: [{ name: 'o', bronze: { format: 'jsonl', nested: value } }] }).tables[0]
        ?.bronze?.nested;
    expect(nested(undefined)).toBe('typed');
    expect(nested('jsonText')).toBe('jsonText');
    expect(() => nested('maybe')).toThrow(ConfigError);
  });
});

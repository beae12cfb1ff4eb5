// Configurations where one table's Delta table, archive or cleanSource reaches another table's files are
// refused at synth and at start-up, every problem at once.
import { describe, expect, it } from 'vitest';
import { type PipelineConfigInput, parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { ConfigError } from '../../../shared/kernel/errors.ts';

type Table = PipelineConfigInput['tables'][number];

function problems(tables: Table[], buckets?: { landingBucket?: string; manifestBucket?: string }): string[] {
  try {
    parsePipelineConfig({ tables }, buckets);
    return [];
  } catch (error) {
    return [...(error as ConfigError).problems];
  }
}

const deleting = { action: 'delete', retentionDays: 30 } as const;
const orders = (cleanSource: Record<string, unknown> = deleting): Table => ({
  name: 'orders',
  prefix: 'orders/',
  bronze: { format: 'json', cleanSource: cleanSource as never },
});

describe('cleanSource beside other tables (F3)', () => {
  it('refuses cleanSource when a table without a Delta table routes the same keys: its manifest consumers lose them', () => {
    const found = problems([orders(), { name: 'audit', prefix: 'orders/eu/' }]).join('\n');
    expect(found).toMatch(/orders\.bronze\.cleanSource: .*'audit'.* no bronze table/);
    expect(problems([orders(), { name: 'all', prefix: '' }]).join('\n')).toContain("'all'");
  });

  it('refuses it beside a reprocess target (live: false) over the same keys, pointing at the archive', () => {
    const found = problems([
      orders(),
      { name: 'orders_v2', prefix: 'orders/', live: false, bronze: { format: 'json' } },
    ]).join('\n');
    expect(found).toMatch(/'orders_v2'.*live: false.*reprocess/);
  });

  it('accepts it beside a live bronze table over the same keys (each file waits for that table) and beside disjoint tables', () => {
    expect(problems([orders(), { name: 'audit', prefix: 'orders/', bronze: { format: 'json' } }])).toEqual(
      [],
    );
    expect(problems([orders(), { name: 'clicks', prefix: 'clicks/' }])).toEqual([]);
    // Disjoint by bucket, by suffix and by a glob's literal start.
    expect(
      problems([
        { ...orders(), bucket: 'a', suffix: '.json' },
        { name: 'b', prefix: 'orders/', bucket: 'b' },
        { name: 'csv', prefix: '', suffix: '.csv' },
        { name: 'logs', glob: 'logs/**' },
      ]),
    ).toEqual([]);
  });
});

describe('the reprocess of a cleanSource table (docs/operations.md)', () => {
  it('accepts a live: false table over the archive, and one in another bucket a table without `bucket` never reads', () => {
    const moving = orders({ action: 'move', moveTo: 's3://archive/orders', retentionDays: 0 });
    expect(
      problems([
        moving,
        {
          name: 'orders_v2',
          bucket: 'archive',
          prefix: 'orders/landing/orders/',
          live: false,
          bronze: { format: 'json' },
        },
      ]),
    ).toEqual([]);
    expect(problems([orders(), { name: 'other', bucket: 'elsewhere', prefix: 'orders/' }])).toEqual([]);
  });
});

describe('cleanSource retention (F22)', () => {
  it('takes more than 7 days for delete, as Auto Loader does, and any retention for move', () => {
    expect(problems([orders({ action: 'delete', retentionDays: 7 })]).join('\n')).toMatch(
      /retentionDays: .*more than 7 days for action 'delete'/,
    );
    expect(problems([orders({ action: 'delete', retentionDays: 8 })])).toEqual([]);
    expect(problems([orders({ action: 'move', moveTo: 's3://archive/old', retentionDays: 0 })])).toEqual([]);
  });
});

describe('moveTo, by the moved key (F15)', () => {
  const moving = (moveTo: string, table: Partial<Table> = {}) =>
    ({ ...orders({ action: 'move', moveTo, retentionDays: 0 }), ...table }) as Table;

  it('refuses a destination whose moved keys a table reads, the landing bucket itself with no prefix included', () => {
    // Moved keys are <moveTo prefix>/<source bucket>/<key>: with the landing bucket known, 'landing/orders/x'.
    expect(
      problems([moving('s3://landing'), { name: 'all', prefix: '' }], { landingBucket: 'landing' }).join(
        '\n',
      ),
    ).toMatch(/moveTo: .*'all' reads landing files: the moved files would be ingested again/);
    expect(
      problems([moving('s3://landing/archive'), { name: 'arch', prefix: 'archive/' }], {
        landingBucket: 'landing',
      }).join('\n'),
    ).toContain("'arch'");
    // A table of the destination bucket by name.
    expect(
      problems([moving('s3://archive/old'), { name: 'x', prefix: 'old/', bucket: 'archive' }]).join('\n'),
    ).toContain("'x'");
  });

  it('accepts a destination no table reads', () => {
    expect(problems([moving('s3://archive/old')])).toEqual([]);
    expect(problems([moving('s3://landing/archive')], { landingBucket: 'landing' })).toEqual([]);
    // The same prefix in another bucket, when the table reads only its own bucket.
    expect(problems([moving('s3://archive/orders', { bucket: 'landing' })])).toEqual([]);
  });
});

describe('location (F20)', () => {
  const bronze = (name: string, location?: string, prefix = `${name}/`): Table => ({
    name,
    prefix,
    bronze: { format: 'json', location },
  });

  it('refuses two tables on one location, or one location inside another', () => {
    expect(problems([bronze('a', 's3://lake/t'), bronze('b', 's3://lake/t/')]).join('\n')).toMatch(
      /b\.bronze\.location: .*'a'/,
    );
    expect(problems([bronze('a', 's3://lake/t'), bronze('b', 's3://lake/t/b')]).join('\n')).toMatch(/'a'/);
    expect(problems([bronze('a', 's3://lake/t'), bronze('b', 's3://lake/tb')])).toEqual([]);
    // A location on another table's default one, once the manifest bucket is known.
    expect(
      problems([bronze('a'), bronze('b', 's3://mbk/a/_bronze/x')], { manifestBucket: 'mbk' }).join('\n'),
    ).toMatch(/b\.bronze\.location: .*'a'/);
  });

  it("refuses a location under a table's landing prefix: the sink's own files would be ingested, in a loop", () => {
    const found = problems([bronze('a', 's3://landing/in/delta', 'in/')], { landingBucket: 'landing' });
    expect(found.join('\n')).toMatch(/a\.bronze\.location: .*table 'a'.*ingested/);
    expect(problems([bronze('a', 's3://other/in/delta', 'in/')], { landingBucket: 'landing' })).toEqual([]);
    // A table whose suffix no Delta file has cannot pick them up.
    expect(
      problems([bronze('a', 's3://landing/in/delta', 'x/'), { name: 'c', prefix: 'in/', suffix: '.csv' }], {
        landingBucket: 'landing',
      }),
    ).toEqual([]);
  });

  it('lists every problem of every table at once', () => {
    const found = problems(
      [
        bronze('a', 's3://lake/t'),
        bronze('b', 's3://lake/t'),
        { ...orders({ action: 'delete', retentionDays: 1 }), name: 'c', prefix: 'c/' },
        { name: 'd', prefix: 'c/' },
      ],
      { landingBucket: 'landing' },
    );
    expect(found.length).toBeGreaterThanOrEqual(3);
  });
});

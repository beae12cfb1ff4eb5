import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { type BronzeConfigInput, bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { buildCommit } from '../../../shared/bronze/delta-log.ts';
import type { BronzeType } from '../../../shared/bronze/delta-types.ts';
import {
  fromDeltaSchemaString,
  type TableSchema,
  toDeltaSchemaString,
} from '../../../shared/bronze/schema.ts';
import { protocolChange, protocolProblems } from '../../../shared/bronze/table-features.ts';
import { isAutomaticWidening, WideningObserver } from '../../../shared/bronze/type-widening.ts';
import { liveRows, MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';

/** The type `current` must widen to for `values` (JSON values unless `csv`), or undefined. */
function widenedFor(current: BronzeType, values: unknown[], csv = false): BronzeType | undefined {
  const observer = new WideningObserver([{ name: 'c', type: current }], csv);
  for (const c of values) observer.observe({ c });
  return observer.widened().get('c');
}

describe("Delta's type widening rules (PROTOCOL.md 'Type Widening', Delta's schema-evolution subset)", () => {
  it('allows only byte -> short -> integer -> long, float -> double and decimal(p,s) -> decimal(p+k1,s+k2), k1 >= k2 >= 0', () => {
    expect(isAutomaticWidening('byte', 'short')).toBe(true);
    expect(isAutomaticWidening('short', 'long')).toBe(true);
    expect(isAutomaticWidening('integer', 'long')).toBe(true);
    expect(isAutomaticWidening('float', 'double')).toBe(true);
    expect(isAutomaticWidening('decimal(5,2)', 'decimal(9,2)')).toBe(true);
    expect(isAutomaticWidening('decimal(5,2)', 'decimal(6,3)')).toBe(true);
    // Scale up without the integer digits: k2 > k1 would lose integer digits.
    expect(isAutomaticWidening('decimal(5,2)', 'decimal(5,3)')).toBe(false);
    expect(isAutomaticWidening('long', 'integer')).toBe(false);
    expect(isAutomaticWidening('long', 'double')).toBe(false);
    // In Delta's table but not applied by its schema evolution (TypeWideningShims): never automatic here.
    expect(isAutomaticWidening('integer', 'double')).toBe(false);
    expect(isAutomaticWidening('integer', 'decimal(10,0)')).toBe(false);
    expect(isAutomaticWidening('date', 'timestamp_ntz')).toBe(false);
    expect(isAutomaticWidening('long', 'long')).toBe(false);
  });

  it('widens a column to the narrowest allowed type that holds every value exactly', () => {
    expect(widenedFor('integer', [1, 2 ** 40])).toBe('long');
    expect(widenedFor('byte', [1, 300])).toBe('short');
    expect(widenedFor('byte', [300, 70_000])).toBe('integer');
    // 0.1 is a float's shortest text too (it fits); 2^24 + 1 and pi are not.
    expect(widenedFor('float', [0.1, 16777217])).toBe('double');
    expect(widenedFor('float', [Math.PI])).toBe('double');
    expect(widenedFor('decimal(5,2)', [1.5, 1234567.25])).toBe('decimal(9,2)');
    expect(widenedFor('decimal(5,2)', [1.125])).toBe('decimal(6,3)');
    expect(widenedFor('decimal(5,2)', [1234567.25, 1.125])).toBe('decimal(10,3)');
    expect(widenedFor('integer', ['12345678901'], true)).toBe('long');
  });

  it('leaves a column whose values all fit, or whose misfits no allowed widening holds (they are rescued)', () => {
    expect(widenedFor('integer', [1, -5, null])).toBeUndefined();
    expect(widenedFor('integer', [2.5, 'x', true])).toBeUndefined();
    expect(widenedFor('long', [2n ** 70n])).toBeUndefined();
    expect(widenedFor('float', ['x'])).toBeUndefined();
    expect(widenedFor('decimal(36,2)', [10n ** 37n])).toBeUndefined();
    expect(widenedFor('string', [1])).toBeUndefined();
  });

  it('records each change in the field metadata, kept through a schema string round trip', () => {
    const schema: TableSchema = [
      { name: 'n', type: 'long', typeChanges: [{ fromType: 'integer', toType: 'long' }] },
      { name: 'plain', type: 'string' },
    ];
    const text = toDeltaSchemaString(schema);
    const fields = (JSON.parse(text) as { fields: { name: string; metadata: unknown }[] }).fields;
    expect(fields[0]).toEqual({
      name: 'n',
      type: 'long',
      nullable: true,
      metadata: { 'delta.typeChanges': [{ fromType: 'integer', toType: 'long' }] },
    });
    expect(fields[1]?.metadata).toEqual({});
    expect(fromDeltaSchemaString(text)).toEqual(schema);
  });

  it('is a feature this sink reads and writes, added to the protocol by the commit that first widens', () => {
    const widened: TableSchema = [
      { name: 'n', type: 'long', typeChanges: [{ fromType: 'integer', toType: 'long' }] },
    ];
    expect(protocolChange({ minReaderVersion: 1, minWriterVersion: 2 }, widened)).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['typeWidening'],
      writerFeatures: ['appendOnly', 'invariants', 'typeWidening'],
    });
    const both: TableSchema = [...widened, { name: 'at', type: 'timestamp_ntz' }];
    const ntzTable = {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['timestampNtz'],
      writerFeatures: ['timestampNtz'],
    };
    expect(protocolChange(ntzTable, both)).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['timestampNtz', 'typeWidening'],
      writerFeatures: ['timestampNtz', 'typeWidening'],
    });
    expect(
      protocolChange(
        {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ['typeWidening'],
          writerFeatures: ['typeWidening'],
        },
        widened,
      ),
    ).toBeUndefined();
    expect(
      protocolProblems({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['typeWidening'],
        writerFeatures: ['appendOnly', 'typeWidening'],
      }),
    ).toEqual([]);
    // The preview feature of Delta 3.x differs (its typeChanges carry tableVersion): still refused.
    expect(
      protocolProblems({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['typeWidening-preview'],
        writerFeatures: ['typeWidening-preview'],
      }),
    ).toHaveLength(2);
  });
});

interface Action {
  protocol?: unknown;
  metaData?: { schemaString: string; configuration: Record<string, string> };
}
const actionsOf = (delta: MemoryDelta, version: number): Action[] =>
  (delta.commits.get(version) ?? '')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Action);

async function sinkWrites(
  bronze: BronzeConfigInput,
  schema: TableSchema,
  files: Record<string, string | Uint8Array>,
  configuration?: Record<string, string>,
) {
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  for (const [key, body] of Object.entries(files)) sources.objects.set(key, body);
  const config = bronzeConfigSchema.parse(bronze);
  // Version 0: the table as it was, with another writer's table properties when given.
  const seed = buildCommit({
    table: 't',
    location: 's3://b/p',
    manifestVersion: 0,
    batchIds: [],
    sourceFiles: { from: 0, to: 0, of: 0 },
    previous: undefined,
    schema,
    schemaChanged: true,
    files: [],
    missingSources: [],
    timestamp: 0,
  });
  const lines = seed
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, Record<string, unknown>>);
  for (const action of lines)
    if (action.metaData && configuration) action.metaData.configuration = configuration;
  await delta.putCommitIfAbsent(0, lines.map((a) => JSON.stringify(a)).join('\n'));
  const result = await writeVersion(
    { sources, delta },
    {
      table: 't',
      location: 's3://b/p',
      config,
      manifest: manifestOf('t', 1, Object.keys(files)),
      schema: undefined,
    },
  );
  const commit = actionsOf(delta, 1);
  const metaData = commit.find((a) => a.metaData)?.metaData;
  return {
    result,
    protocol: commit.find((a) => a.protocol)?.protocol,
    metaData,
    schema: metaData && fromDeltaSchemaString(metaData.schemaString),
    rows: await liveRows(delta),
  };
}

const jsonl = (...records: unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('a bronze table with typeWidening on', () => {
  const hinted = {
    format: 'jsonl',
    schemaHints: { n: 'integer', amount: 'decimal(5,2)', ratio: 'float' },
  } as const;
  const schema: TableSchema = [
    { name: 'n', type: 'integer' },
    { name: 'amount', type: 'decimal(5,2)' },
    { name: 'ratio', type: 'float' },
  ];

  it('widens a column a value does not fit, in a commit with the typeChanges, the property and the feature, and writes the value unaltered', async () => {
    const t = await sinkWrites({ ...hinted, typeWidening: true }, schema, {
      'a.json':
        '{"n":1099511627776,"amount":1234567.25,"ratio":3.141592653589793}\n{"n":7,"amount":1.5,"ratio":0.5}\n',
    });
    expect(t.result.rescued).toBe(0);
    expect(t.schema).toEqual([
      { name: 'n', type: 'long', typeChanges: [{ fromType: 'integer', toType: 'long' }] },
      {
        name: 'amount',
        type: 'decimal(9,2)',
        typeChanges: [{ fromType: 'decimal(5,2)', toType: 'decimal(9,2)' }],
      },
      { name: 'ratio', type: 'double', typeChanges: [{ fromType: 'float', toType: 'double' }] },
    ]);
    expect(t.metaData?.configuration).toEqual({ 'delta.enableTypeWidening': 'true' });
    expect(t.protocol).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['typeWidening'],
      writerFeatures: ['appendOnly', 'invariants', 'typeWidening'],
    });
    const rows = t.rows.filter((r) => r._manifest_version === 1n);
    expect(rows.map((r) => [r.n, r.amount, r.ratio, r._rescued_data])).toEqual([
      [2n ** 40n, 1234567.25, Math.PI, null],
      [7n, 1.5, 0.5, null],
    ]);
  });

  it('widens a column from the Parquet values, not from the declared type: an INT64 file whose values fit keeps integer', async () => {
    const parquet = (data: bigint[]) =>
      new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'n', data, type: 'INT64' }] }));
    const fits = await sinkWrites(
      { format: 'parquet', typeWidening: true },
      [{ name: 'n', type: 'integer' }],
      {
        'a.parquet': parquet([1n, 2n]),
      },
    );
    expect(fits.metaData).toBeUndefined();
    const big = await sinkWrites(
      { format: 'parquet', typeWidening: true },
      [{ name: 'n', type: 'integer' }],
      {
        'a.parquet': parquet([1n, 2n ** 40n]),
      },
    );
    expect(big.schema).toEqual([
      { name: 'n', type: 'long', typeChanges: [{ fromType: 'integer', toType: 'long' }] },
    ]);
    expect(big.result.rescued).toBe(0);
  });

  it('still rescues what no allowed widening holds', async () => {
    const t = await sinkWrites({ ...hinted, typeWidening: true }, schema, {
      'a.json': jsonl({ n: 2.5, amount: 'x' }),
    });
    expect(t.metaData).toBeUndefined();
    expect(t.protocol).toBeUndefined();
    expect(t.result.rescued).toBe(1);
  });

  it('widens nothing by default: the value is rescued and the table keeps reader 1 (delta-rs reads no typeWidening table)', async () => {
    const t = await sinkWrites(hinted, schema, { 'a.json': jsonl({ n: 2 ** 40 }) });
    expect(t.metaData).toBeUndefined();
    expect(t.protocol).toBeUndefined();
    expect(t.result.rescued).toBe(1);
  });

  it('widens nothing when another writer set delta.enableTypeWidening to false (PROTOCOL.md: writers must reject widening then)', async () => {
    const t = await sinkWrites(
      { ...hinted, typeWidening: true },
      schema,
      { 'a.json': jsonl({ n: 2 ** 40 }) },
      {
        'delta.enableTypeWidening': 'false',
      },
    );
    expect(t.metaData).toBeUndefined();
    expect(t.result.rescued).toBe(1);
    // Spark reads the property as a boolean in any case: TRUE allows it too.
    const upper = await sinkWrites(
      { ...hinted, typeWidening: true },
      schema,
      { 'a.json': jsonl({ n: 2 ** 40 }) },
      { 'delta.enableTypeWidening': 'TRUE' },
    );
    expect(upper.result.rescued).toBe(0);
  });

  it('keeps earlier type changes when a later version adds a column or widens again', async () => {
    const widened: TableSchema = [
      { name: 'n', type: 'integer', typeChanges: [{ fromType: 'short', toType: 'integer' }] },
    ];
    const t = await sinkWrites({ format: 'jsonl', typeWidening: true }, widened, {
      'a.json': jsonl({ n: 2 ** 40, color: 'red' }),
    });
    expect(t.schema).toEqual([
      {
        name: 'n',
        type: 'long',
        typeChanges: [
          { fromType: 'short', toType: 'integer' },
          { fromType: 'integer', toType: 'long' },
        ],
      },
      { name: 'color', type: 'string' },
    ]);
  });
});

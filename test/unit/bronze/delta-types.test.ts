import { parquetMetadata } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { checkpointName, readCheckpoint } from '../../../shared/bronze/checkpoint.ts';
import {
  arrayOf,
  type BronzeType,
  mapOf,
  mergeTypes,
  parseBronzeType,
  structOf,
  typeText,
} from '../../../shared/bronze/delta-types.ts';
import { applyCommit, emptyLogState } from '../../../shared/bronze/log-state.ts';
import { type DataFile, ParquetSplitter } from '../../../shared/bronze/parquet-file.ts';
import {
  fromDeltaSchemaString,
  type TableSchema,
  toDeltaSchemaString,
} from '../../../shared/bronze/schema.ts';
import { writeCheckpoint } from '../../../shared/bronze/snapshot.ts';
import { readBronzeTable } from '../../../shared/bronze/table-state.ts';
import { memoryTable } from './table-io.ts';

const nested: TableSchema = [
  {
    name: 's',
    type: structOf([
      { name: 'a', type: 'long' },
      { name: 'at', type: 'timestamp_ntz' },
    ]),
  },
  { name: 'l', type: arrayOf(arrayOf('decimal(20,3)')) },
  { name: 'm', type: mapOf('integer', structOf([{ name: 'b', type: 'binary' }])) },
];

describe('the Delta type model', () => {
  it('serializes nested types as PROTOCOL.md "Schema Serialization Format" and reads them back', () => {
    const text = toDeltaSchemaString(nested);
    expect(JSON.parse(text).fields[1]).toEqual({
      name: 'l',
      type: {
        type: 'array',
        elementType: { type: 'array', elementType: 'decimal(20,3)', containsNull: true },
        containsNull: true,
      },
      nullable: true,
      metadata: {},
    });
    expect(JSON.parse(text).fields[2].type).toEqual({
      type: 'map',
      keyType: 'integer',
      valueType: { type: 'struct', fields: [{ name: 'b', type: 'binary', nullable: true, metadata: {} }] },
      valueContainsNull: true,
    });
    expect(fromDeltaSchemaString(text)).toEqual(nested);
    expect(nested.map((c) => typeText(c.type))).toEqual([
      'struct<a:long,at:timestamp_ntz>',
      'array<array<decimal(20,3)>>',
      'map<integer,struct<b:binary>>',
    ]);
  });

  it("reads decimal(p, s) with a space (PROTOCOL.md's own example) and refuses a type it cannot write", () => {
    expect(parseBronzeType('decimal(10, 4)')).toBe('decimal(10,4)');
    expect(() => parseBronzeType('decimal(39,0)')).toThrow("'decimal(39,0)' is not a valid decimal");
    expect(() => parseBronzeType('variant', 'v')).toThrow(
      "Delta schema: v: type 'variant' is not one this sink reads or writes",
    );
    expect(() => parseBronzeType({ type: 'udt' })).toThrow('is not one this sink reads or writes');
  });

  it('merges two types only where every value converts exactly (PROTOCOL.md "Type Widening" as the guide)', () => {
    const cases: [BronzeType, BronzeType, BronzeType | undefined][] = [
      ['byte', 'short', 'short'],
      ['integer', 'long', 'long'],
      ['float', 'double', 'double'],
      ['integer', 'double', 'double'],
      ['long', 'double', undefined],
      ['date', 'timestamp_ntz', undefined],
      ['timestamp', 'timestamp_ntz', undefined],
      ['decimal(5,2)', 'decimal(7,1)', 'decimal(8,2)'],
      ['integer', 'decimal(5,2)', 'decimal(12,2)'],
      ['long', 'decimal(30,20)', undefined],
      ['string', 'binary', undefined],
      [arrayOf('integer'), arrayOf('long'), arrayOf('long')],
      [mapOf('string', 'float'), mapOf('string', 'double'), mapOf('string', 'double')],
      [
        structOf([{ name: 'a', type: 'integer' }]),
        structOf([
          { name: 'b', type: 'string' },
          { name: 'a', type: 'long' },
        ]),
        structOf([
          { name: 'a', type: 'long' },
          { name: 'b', type: 'string' },
        ]),
      ],
      // `a` beside `A` in one struct would make the table unreadable.
      [structOf([{ name: 'a', type: 'integer' }]), structOf([{ name: 'A', type: 'integer' }]), undefined],
    ];
    for (const [a, b, merged] of cases) expect([a, b, mergeTypes(a, b)]).toEqual([a, b, merged]);
  });
});

describe('the Parquet data files, as Delta readers expect them', () => {
  it('writes each type with the physical and logical type of PROTOCOL.md "Delta Data Type to Parquet Type Mappings"', async () => {
    const schema: TableSchema = [
      ...(
        [
          'string',
          'binary',
          'boolean',
          'byte',
          'short',
          'integer',
          'long',
          'float',
          'double',
          'date',
          'timestamp',
          'timestamp_ntz',
          'decimal(9,2)',
          'decimal(18,2)',
          'decimal(38,2)',
        ] as const
      ).map((type) => ({ name: `c_${type.replace(/\W/g, '_')}`, type })),
      ...nested,
    ];
    let file: DataFile | undefined;
    const splitter = new ParquetSplitter({
      schema,
      manifestVersion: 1,
      attempt: 'a',
      maxFileBytes: 1 << 30,
      onFile: async (f) => {
        file = f;
      },
    });
    await splitter.add({ _rescued_data: null, _source_file: 's3://b/k', _manifest_version: 1n });
    await splitter.close();
    const bytes = file?.bytes as Uint8Array;
    const metadata = parquetMetadata(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
    const shown = metadata.schema
      .slice(1)
      .map((e) =>
        [
          e.name,
          e.repetition_type,
          e.type ?? `group(${e.num_children})`,
          e.type_length,
          e.converted_type,
          e.logical_type && JSON.stringify(e.logical_type),
        ]
          .filter((x) => x !== undefined)
          .join(' '),
      );
    expect(shown).toEqual([
      'c_string OPTIONAL BYTE_ARRAY UTF8 {"type":"STRING"}',
      'c_binary OPTIONAL BYTE_ARRAY',
      'c_boolean OPTIONAL BOOLEAN',
      'c_byte OPTIONAL INT32 INT_8',
      'c_short OPTIONAL INT32 INT_16',
      'c_integer OPTIONAL INT32',
      'c_long OPTIONAL INT64',
      'c_float OPTIONAL FLOAT',
      'c_double OPTIONAL DOUBLE',
      'c_date OPTIONAL INT32 DATE {"type":"DATE"}',
      'c_timestamp OPTIONAL INT64 TIMESTAMP_MICROS {"type":"TIMESTAMP","isAdjustedToUTC":true,"unit":"MICROS"}',
      'c_timestamp_ntz OPTIONAL INT64 {"type":"TIMESTAMP","isAdjustedToUTC":false,"unit":"MICROS"}',
      'c_decimal_9_2_ OPTIONAL INT32 DECIMAL {"type":"DECIMAL","scale":2,"precision":9}',
      'c_decimal_18_2_ OPTIONAL INT64 DECIMAL {"type":"DECIMAL","scale":2,"precision":18}',
      'c_decimal_38_2_ OPTIONAL FIXED_LEN_BYTE_ARRAY 16 DECIMAL {"type":"DECIMAL","scale":2,"precision":38}',
      's OPTIONAL group(2)',
      'a OPTIONAL INT64',
      'at OPTIONAL INT64 {"type":"TIMESTAMP","isAdjustedToUTC":false,"unit":"MICROS"}',
      'l OPTIONAL group(1) LIST {"type":"LIST"}',
      'list REPEATED group(1)',
      'element OPTIONAL group(1) LIST {"type":"LIST"}',
      'list REPEATED group(1)',
      'element OPTIONAL FIXED_LEN_BYTE_ARRAY 9 DECIMAL {"type":"DECIMAL","scale":3,"precision":20}',
      'm OPTIONAL group(1) MAP {"type":"MAP"}',
      'key_value REPEATED group(2)',
      'key REQUIRED INT32',
      'value OPTIONAL group(1)',
      'b OPTIONAL BYTE_ARRAY',
      '_rescued_data OPTIONAL BYTE_ARRAY UTF8 {"type":"STRING"}',
      '_source_file OPTIONAL BYTE_ARRAY UTF8 {"type":"STRING"}',
      '_manifest_version OPTIONAL INT64',
    ]);
  });
});

describe('timestamp_ntz and the protocol (PROTOCOL.md "Timestamp without timezone", "Table Features")', () => {
  it('upgrades the protocol in the commit that first adds a timestamp_ntz column, never before', async () => {
    const { ByteWriter, parquetWrite } = await import('hyparquet-writer');
    const file = (withNtz: boolean) => {
      const writer = new ByteWriter();
      parquetWrite({
        writer,
        columnData: [
          { name: 'id', data: [1n] },
          ...(withNtz ? [{ name: 'local', data: [1704164645123456n] }] : []),
        ],
        schema: [
          { name: 'root', num_children: withNtz ? 2 : 1 },
          { name: 'id', type: 'INT64', repetition_type: 'OPTIONAL' },
          ...(withNtz
            ? [
                {
                  name: 'local',
                  type: 'INT64' as const,
                  repetition_type: 'OPTIONAL' as const,
                  logical_type: {
                    type: 'TIMESTAMP' as const,
                    isAdjustedToUTC: false,
                    unit: 'MICROS' as const,
                  },
                },
              ]
            : []),
        ],
      });
      return writer.getBytes();
    };
    const t = memoryTable({ format: 'parquet', checkpointInterval: 1 });
    await t.write({ 'a.parquet': file(false) });
    await t.write({ 'b.parquet': file(false) });
    await t.write({ 'c.parquet': file(true) });
    await t.write({ 'd.parquet': file(true) });
    const protocols = [0, 1, 2, 3].map((v) => t.actions(v).find((a) => a.protocol)?.protocol);
    expect(protocols).toEqual([
      { minReaderVersion: 1, minWriterVersion: 2 },
      undefined,
      {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['timestampNtz'],
        writerFeatures: ['appendOnly', 'invariants', 'timestampNtz'],
      },
      undefined,
    ]);
    expect(t.actions(2).map((a) => Object.keys(a)[0])).toEqual([
      'commitInfo',
      'protocol',
      'metaData',
      'txn',
      'add',
    ]);
    expect(t.schema).toEqual([
      { name: 'id', type: 'long' },
      { name: 'local', type: 'timestamp_ntz' },
    ]);
    // A checkpoint keeps the features; `inlet table` reads the nested schema through it.
    const state = emptyLogState();
    for (const v of [0, 1, 2, 3]) applyCommit(state, v, t.delta.commits.get(v) ?? '');
    await writeCheckpoint(t.delta, 3);
    const read = await readCheckpoint(3, t.delta.logFiles.get(checkpointName(3)) ?? new Uint8Array());
    expect(read.protocol).toEqual(state.protocol);
    expect((await readBronzeTable('t', t.delta)).schema).toEqual(t.schema);
  });

  it('a table created with a timestamp_ntz column lists just that feature', async () => {
    const { ByteWriter, parquetWrite } = await import('hyparquet-writer');
    const writer = new ByteWriter();
    parquetWrite({
      writer,
      columnData: [{ name: 'local', data: [1n] }],
      schema: [
        { name: 'root', num_children: 1 },
        {
          name: 'local',
          type: 'INT64',
          repetition_type: 'OPTIONAL',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' },
        },
      ],
    });
    const t = memoryTable({ format: 'parquet' });
    await t.write({ 'a.parquet': writer.getBytes() });
    expect(t.actions(0).find((a) => a.protocol)?.protocol).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ['timestampNtz'],
      writerFeatures: ['timestampNtz'],
    });
    expect((await t.cells()).map((r) => r.local)).toEqual([1000n]);
  });
});

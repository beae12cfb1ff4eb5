/**
 * Parquet written by pyarrow with every type the sink maps (docs/bronze.md, "Parquet"): the fixture files
 * of test/integration/bronze-values.test.ts, which there only delta-rs reads back, here read by Spark +
 * Delta Lake too. One table over four versions: every primitive and nested type; timestamp_ntz, whose
 * version moves the protocol to table features; INT96; and what no Delta type holds, rescued. A checkpoint
 * at version 2, after the upgrade, so both engines also take the features from it.
 */
import { pyarrowFile } from './pyarrow-files.ts';
import { because, type Columns, literal, rescued, type Shape } from './shape.ts';

const hex = (bytes: readonly number[]) => Buffer.from(bytes).toString('hex');
const ALL_BYTES = hex(Array.from({ length: 256 }, (_, i) => i));

/** basic.parquet: each Parquet type as Delta maps it (the table of docs/bronze.md, "Parquet"). */
const BASIC: Columns = [
  ['id', 'long'],
  ['i8', 'byte'],
  ['i16', 'short'],
  ['i32', 'integer'],
  ['i64', 'long'],
  ['u8', 'short'],
  ['u16', 'integer'],
  ['u32', 'long'],
  ['u64', 'decimal(20,0)'],
  ['f32', 'float'],
  ['f64', 'double'],
  ['dec9', 'decimal(9,2)'],
  ['dec18', 'decimal(18,4)'],
  ['dec38', 'decimal(38,10)'],
  ['flag', 'boolean'],
  ['text', 'string'],
  ['bytes', 'binary'],
  ['day', 'date'],
  ['ts_us', 'timestamp'],
  ['ts_ms', 'timestamp'],
  ['ts_ns_whole', 'timestamp'],
  // Delta has no time of day: its text with every digit of the unit.
  ['tod_us', 'string'],
  ['tod_ms', 'string'],
  ['list_i64', 'array<long>'],
  ['list_list', 'array<array<string>>'],
  ['list_struct', 'array<struct<q:integer,r:string>>'],
  ['map_str', 'map<string,long>'],
  ['map_int', 'map<integer,array<string>>'],
  ['struct', 'struct<a:long,b:struct<c:string>,d:array<date>,e:decimal(5,2)>'],
];
/** decimal_ints.parquet: the same decimals stored as INT32 / INT64 (as Spark writes them), and FLBA. */
const DECIMAL_INTS: Columns = [
  ['idec9', 'decimal(9,2)'],
  ['idec18', 'decimal(18,4)'],
  ['idec38', 'decimal(38,10)'],
];
const NTZ: Columns = [
  ['ntz_us', 'timestamp_ntz'],
  ['ntz_ms', 'timestamp_ntz'],
  ['nested_ntz', 'struct<at:timestamp_ntz>'],
];

const DEC9 = ['1234567.89', '-9999999.99', '0.01', '0.00', '-0.10'];
const DEC18 = ['99999999999999.9999', '-1.0000', '0.0000', '12.3400', '-0.0001'];
const DEC38 = [
  '9999999999999999999999999999.9999999999',
  '-9999999999999999999999999999.9999999999',
  '0.0000000000',
  '1.5000000000',
  '-3.0000000001',
];

export const PARQUET_SHAPES: readonly Shape[] = [
  {
    name: 'parquet-types-from-pyarrow',
    bronze: { format: 'parquet', checkpointInterval: 2 },
    versions: [
      {
        files: {
          'basic.parquet': pyarrowFile('basic.parquet'),
          'decimal_ints.parquet': pyarrowFile('decimal_ints.parquet'),
        },
        columns: [...BASIC, ...DECIMAL_INTS],
        rows: {
          'basic.parquet': [
            {
              id: 0,
              i8: -128,
              i16: -32768,
              i32: -2147483648,
              i64: -9223372036854775808n,
              u8: 0,
              u16: 0,
              u32: 0,
              u64: '0',
              f32: Number.NaN,
              f64: Number.NaN,
              dec9: DEC9[0] as string,
              dec18: DEC18[0] as string,
              dec38: DEC38[0] as string,
              flag: true,
              text: '',
              bytes: '',
              day: '0001-01-01',
              ts_us: '0001-01-01T00:00:00.000000Z',
              ts_ms: '1969-12-31T23:59:59.999000Z',
              ts_ns_whole: '1969-12-31T23:59:59.999999Z',
              tod_us: '00:00:00.000000',
              tod_ms: '00:00:00.000',
              list_i64: [],
              list_list: [['a'], []],
              list_struct: [{ q: 1, r: 'x' }],
              map_str: [
                ['a', 1],
                ['__proto__', 2],
                ['constructor', 3],
              ],
              map_int: [
                [1, ['one']],
                [-2, []],
              ],
              struct: { a: 1, b: { c: 'x' }, d: ['2020-01-01'], e: '1.50' },
            },
            {
              id: 1,
              i8: 127,
              i16: 32767,
              i32: 2147483647,
              i64: 9223372036854775807n,
              u8: 255,
              u16: 65535,
              u32: 4294967295,
              u64: '18446744073709551615',
              f32: Number.POSITIVE_INFINITY,
              f64: Number.NEGATIVE_INFINITY,
              dec9: DEC9[1] as string,
              dec18: DEC18[1] as string,
              dec38: DEC38[1] as string,
              flag: false,
              text: 'żółw 🐢 日本',
              bytes: '00ff80',
              day: '9999-12-31',
              ts_us: '9999-12-31T23:59:59.999999Z',
              ts_ms: '1970-01-01T00:00:00.000000Z',
              ts_ns_whole: '1970-01-01T00:00:00.000000Z',
              tod_us: '23:59:59.999999',
              tod_ms: '23:59:59.999',
              list_i64: [1, null, 3],
              list_list: [],
              list_struct: [],
              map_str: [],
              map_int: [],
              // A struct whose fields are all null is not a null struct.
              struct: { d: [] },
            },
            {
              id: 2,
              i8: 0,
              i16: 0,
              i32: 0,
              i64: 0,
              u8: 1,
              u16: 1,
              u32: 1,
              u64: '9223372036854775808',
              f32: Number.NEGATIVE_INFINITY,
              f64: 5e-324,
              dec9: DEC9[2] as string,
              dec18: DEC18[2] as string,
              dec38: DEC38[2] as string,
              flag: true,
              text: 'tab\there',
              bytes: '616263',
              day: '1969-12-31',
              ts_us: '1969-12-31T23:59:59.999999Z',
              ts_ms: '2024-01-02T03:04:05.123000Z',
              ts_ns_whole: '2024-01-02T03:04:05.123456Z',
              tod_us: '00:00:00.000001',
              tod_ms: '00:00:00.001',
              list_list: [null, ['b', null]],
              list_struct: [null, {}],
            },
            {
              id: 3,
              i8: -1,
              i16: -1,
              i32: -1,
              i64: -1,
              u8: 2,
              u16: 2,
              u32: 2,
              u64: '1',
              f32: -0,
              f64: -0,
              dec9: DEC9[3] as string,
              dec18: DEC18[3] as string,
              dec38: DEC38[3] as string,
              flag: false,
              text: 'quote " and \\',
              bytes: ALL_BYTES,
              day: '1970-01-01',
              ts_us: '2024-01-02T03:04:05.123456Z',
              ts_ms: '0001-01-01T00:00:00.000000Z',
              ts_ns_whole: '1677-09-21T00:12:43.145225Z',
              tod_us: '12:34:56.000001',
              tod_ms: '12:34:56.001',
              list_i64: [9223372036854775807n],
              map_str: [['x', null]],
              map_int: [[3, null]],
              struct: { a: -1, b: {}, e: '-0.01' },
            },
            {
              id: 4,
              i8: 5,
              i16: 300,
              i32: 70000,
              i64: 9007199254740993n,
              u8: 3,
              u16: 3,
              u32: 3,
              u64: '3',
              f32: 3.4028234663852886e38,
              f64: 1.7976931348623157e308,
              dec9: DEC9[4] as string,
              dec18: DEC18[4] as string,
              dec38: DEC38[4] as string,
              flag: true,
              text: 'x'.repeat(300),
              bytes: '0a',
              day: '2024-02-29',
              ts_us: '1900-01-01T00:00:00.000001Z',
              ts_ms: '9999-12-31T23:59:59.999000Z',
              ts_ns_whole: '2262-04-11T23:47:16.854775Z',
              tod_us: '00:00:00.000012',
              tod_ms: '00:00:00.012',
              list_i64: [null],
              list_list: [['c']],
              list_struct: [{ q: -5, r: 'é' }],
              map_str: [['ü', -1]],
              map_int: [[2147483647, ['m', null]]],
              struct: { a: 4611686018427387904n, b: { c: '🙂' }, d: [null], e: '999.99' },
            },
            { id: 5 },
          ],
          'decimal_ints.parquet': [
            ...DEC9.map((_, i) => ({
              id: i,
              idec9: DEC9[i] as string,
              idec18: DEC18[i] as string,
              idec38: DEC38[i] as string,
            })),
            { id: 5 },
          ],
        },
      },
      {
        files: { 'ntz.parquet': pyarrowFile('ntz.parquet') },
        columns: [...BASIC, ...DECIMAL_INTS, ...NTZ],
        rows: {
          'ntz.parquet': [
            {
              id: 0,
              ntz_us: '0001-01-01T00:00:00.000000',
              ntz_ms: '1969-12-31T23:59:59.999000',
              nested_ntz: { at: '2000-01-01T00:00:00.000001' },
            },
            {
              id: 1,
              ntz_us: '9999-12-31T23:59:59.999999',
              ntz_ms: '1970-01-01T00:00:00.000000',
              nested_ntz: {},
            },
            { id: 2, ntz_us: '1969-12-31T23:59:59.999999', ntz_ms: '1970-01-01T00:00:00.001000' },
            {
              id: 3,
              ntz_us: '2024-01-02T03:04:05.123456',
              ntz_ms: '2024-01-02T03:04:05.123000',
              nested_ntz: { at: '1960-06-06T00:00:00.000000' },
            },
            {
              id: 4,
              ntz_us: '1970-01-01T00:00:00.000000',
              ntz_ms: '1970-01-01T00:00:00.002000',
              nested_ntz: { at: '2100-01-01T00:00:00.000000' },
            },
            { id: 5 },
          ],
        },
      },
      {
        // INT96, the legacy instant Spark and Hive write: a `timestamp` (UTC).
        files: { 'int96.parquet': pyarrowFile('int96.parquet') },
        columns: [...BASIC, ...DECIMAL_INTS, ...NTZ, ['ts96', 'timestamp']],
        rows: {
          'int96.parquet': [
            { id: 0, ts96: '1970-01-01T00:00:00.000000Z' },
            { id: 1, ts96: '1969-12-31T23:59:59.999999Z' },
            { id: 2, ts96: '2024-01-02T03:04:05.123456Z' },
            { id: 3, ts96: '1677-09-21T00:12:43.145225Z' },
            { id: 4, ts96: '2262-04-11T23:47:16.854775Z' },
            { id: 5 },
          ],
        },
      },
      {
        // No Delta type holds a nanosecond with sub-microsecond digits or a decimal(50,2); a struct with
        // fields `k` and `K`, a column `name` after `Name` and `_Source_File` cannot be columns: rescued.
        files: { 'rescue.parquet': pyarrowFile('rescue.parquet') },
        columns: [
          ...BASIC,
          ...DECIMAL_INTS,
          ...NTZ,
          ['ts96', 'timestamp'],
          ['ts_ns', 'timestamp'],
          ['Name', 'string'],
        ],
        rows: {
          'rescue.parquet': [
            {
              id: 0,
              Name: 'upper',
              _rescued_data: rescued(
                {
                  ts_ns: '2024-01-02T03:04:05.123456789Z',
                  wide: literal('123456789012345678901234567890123456789012345678.91'),
                  pair: { k: 1, K: 2 },
                  name: 'lower',
                  _Source_File: 'mine',
                },
                {
                  ts_ns: because.subMicro,
                  wide: because.wideDecimal(50, 2),
                  pair: because.fieldsByCase('k', 'K'),
                  name: because.caseOf('Name'),
                  _Source_File: because.sinkColumn('_source_file'),
                },
              ),
            },
            {
              id: 1,
              ts_ns: '2024-01-02T03:04:05.123456Z',
              _rescued_data: rescued(
                { wide: literal('-0.01'), name: 'l' },
                { wide: because.wideDecimal(50, 2), name: because.caseOf('Name') },
              ),
            },
            {
              id: 2,
              Name: 'U',
              _rescued_data: rescued(
                { ts_ns: '1969-12-31T23:59:59.999999999Z', pair: { k: null, K: null }, _Source_File: 'x' },
                {
                  ts_ns: because.subMicro,
                  pair: because.fieldsByCase('k', 'K'),
                  _Source_File: because.sinkColumn('_source_file'),
                },
              ),
            },
            {
              id: 3,
              Name: 'u',
              _rescued_data: rescued(
                { wide: literal('1.00'), pair: { k: 3, K: null }, name: 'l2', _Source_File: 'y' },
                {
                  wide: because.wideDecimal(50, 2),
                  pair: because.fieldsByCase('k', 'K'),
                  name: because.caseOf('Name'),
                  _Source_File: because.sinkColumn('_source_file'),
                },
              ),
            },
          ],
        },
      },
    ],
    written: async (t) => {
      // The protocol moves to table features in the version that first has a timestamp_ntz column, not before
      // (docs/bronze.md, "The protocol and timestamp_ntz").
      const protocols = await Promise.all(
        [0, 1].map(async (v) => (await t.commit(v)).find((a) => a.protocol)?.protocol),
      );
      const [first, upgraded] = protocols;
      if (
        JSON.stringify(first) !== JSON.stringify({ minReaderVersion: 1, minWriterVersion: 2 }) ||
        upgraded?.minReaderVersion !== 3 ||
        JSON.stringify(upgraded.readerFeatures) !== JSON.stringify(['timestampNtz'])
      )
        throw new Error(`the table is not the shape it claims: protocols ${JSON.stringify(protocols)}`);
    },
  },
];

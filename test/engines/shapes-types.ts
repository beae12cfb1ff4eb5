/**
 * Types of JSON and CSV values (docs/bronze.md, "JSON and CSV", "schemaHints"): dates and timestamps inferred
 * from their text (with an offset a `timestamp`, without one a `timestamp_ntz`), objects and arrays as
 * `struct` / `array` columns, a new struct field added by a later version, a value of another type rescued
 * rather than the column widened, and hints of every kind (decimals, small integers, float, binary, nested).
 * Values that no type holds exactly (sub-microsecond digits, more digits than the decimal's scale) are
 * rescued as their exact text; both engines must read every other value exactly as written.
 */
import { because, literal, rescued, type Shape } from './shape.ts';

const lines = (...records: readonly string[]) => records.map((r) => `${r}\n`).join('');

const USER = 'struct<name:string,tags:array<string>>';
const USER_AGED = 'struct<name:string,tags:array<string>,age:long>';

export const TYPE_SHAPES: readonly Shape[] = [
  {
    name: 'json-inferred-types',
    bronze: { format: 'jsonl' },
    versions: [
      {
        files: {
          'a.json': lines(
            '{"id":1,"day":"2024-02-29","at":"2024-01-02T03:04:05.123456Z","local":"2024-01-02T03:04:05","user":{"name":"ann","tags":["x","y"]},"points":[1.5,null]}',
            '{"id":2,"day":"0001-01-01","at":"2024-01-02T03:04:05+02:00","local":"9999-12-31T23:59:59.999999","user":{"name":"bo","tags":[]},"points":[]}',
            '{"id":3,"at":"2024-01-02T03:04:05.123456789Z","local":"1969-12-31T23:59:59.999999","user":null}',
          ),
        },
        columns: [
          ['id', 'long'],
          ['day', 'date'],
          ['at', 'timestamp'],
          ['local', 'timestamp_ntz'],
          ['user', USER],
          ['points', 'array<double>'],
        ],
        rows: {
          'a.json': [
            {
              id: 1,
              day: '2024-02-29',
              at: '2024-01-02T03:04:05.123456Z',
              local: '2024-01-02T03:04:05.000000',
              user: { name: 'ann', tags: ['x', 'y'] },
              points: [1.5, null],
            },
            {
              id: 2,
              day: '0001-01-01',
              at: '2024-01-02T01:04:05.000000Z',
              local: '9999-12-31T23:59:59.999999',
              user: { name: 'bo', tags: [] },
              points: [],
            },
            {
              id: 3,
              local: '1969-12-31T23:59:59.999999',
              _rescued_data: rescued(
                { at: '2024-01-02T03:04:05.123456789Z' },
                { at: because.misfit('timestamp') },
              ),
            },
          ],
        },
      },
      {
        // A new struct field is added (addNewColumns); a date column keeps its type (no type widening): a
        // timestamp or a 2.5 for a long is rescued, never altered.
        files: {
          'b.json': lines(
            '{"id":4,"user":{"name":"cy","tags":["z"],"age":30}}',
            '{"id":2.5,"day":"2024-01-02T00:00:00Z"}',
          ),
        },
        columns: [
          ['id', 'long'],
          ['day', 'date'],
          ['at', 'timestamp'],
          ['local', 'timestamp_ntz'],
          ['user', USER_AGED],
          ['points', 'array<double>'],
        ],
        rows: {
          'b.json': [
            { id: 4, user: { name: 'cy', tags: ['z'], age: 30 } },
            {
              _rescued_data: rescued(
                { id: 2.5, day: '2024-01-02T00:00:00Z' },
                { id: because.misfit('long'), day: because.misfit('date') },
              ),
            },
          ],
        },
      },
    ],
  },
  {
    name: 'csv-inferred-and-hinted-types',
    bronze: {
      format: 'csv',
      schemaHints: {
        amount: 'decimal(13,2)',
        qty: 'int',
        small: 'smallint',
        tiny: 'tinyint',
        ratio: 'float',
        raw: 'binary',
      },
    },
    versions: [
      {
        files: {
          '1.csv':
            'id,day,at,local,amount,qty,small,tiny,ratio,raw\n' +
            '1,2024-01-02,2024-01-02T03:04:05Z,2024-01-02T03:04:05.5,12345678901.25,2147483647,-32768,127,0.1,AAEC\n' +
            '2,,2024-01-02T03:04:05.000001-08:00,,0.10,-2147483648,1,-128,16777216,\n',
        },
        columns: [
          ['id', 'long'],
          ['day', 'date'],
          ['at', 'timestamp'],
          ['local', 'timestamp_ntz'],
          ['amount', 'decimal(13,2)'],
          ['qty', 'integer'],
          ['small', 'short'],
          ['tiny', 'byte'],
          ['ratio', 'float'],
          ['raw', 'binary'],
        ],
        rows: {
          '1.csv': [
            {
              id: 1,
              day: '2024-01-02',
              at: '2024-01-02T03:04:05.000000Z',
              local: '2024-01-02T03:04:05.500000',
              amount: '12345678901.25',
              qty: 2147483647,
              small: -32768,
              tiny: 127,
              ratio: Math.fround(0.1),
              raw: '000102',
            },
            {
              id: 2,
              at: '2024-01-02T11:04:05.000001Z',
              amount: '0.10',
              qty: -2147483648,
              small: 1,
              tiny: -128,
              ratio: 16777216,
            },
          ],
        },
      },
      {
        files: {
          '2.csv':
            'id,day,at,amount,qty,small,tiny,ratio,raw\n' +
            '3,2024-02-30,2024-01-02T03:04:05.1234567Z,1.255,2147483648,32768,128,16777217,AAE\n',
        },
        rows: {
          '2.csv': [
            {
              id: 3,
              _rescued_data: rescued(
                {
                  day: '2024-02-30',
                  at: '2024-01-02T03:04:05.1234567Z',
                  amount: '1.255',
                  qty: '2147483648',
                  small: '32768',
                  tiny: '128',
                  ratio: '16777217',
                  raw: 'AAE',
                },
                {
                  day: because.misfit('date'),
                  at: because.misfit('timestamp'),
                  amount: because.misfit('decimal(13,2)'),
                  qty: because.misfit('integer'),
                  small: because.misfit('short'),
                  tiny: because.misfit('byte'),
                  ratio: because.misfit('float'),
                  raw: because.misfit('binary'),
                },
              ),
            },
          ],
        },
      },
    ],
  },
  {
    name: 'json-hinted-nested-types',
    bronze: {
      format: 'jsonl',
      schemaHints: {
        s: 'struct<at:timestamp,n:int,d:decimal(5,2)>',
        a: 'array<date>',
        m: 'map<string,bigint>',
        b: 'binary',
        big: 'decimal(38,0)',
      },
    },
    versions: [
      {
        files: {
          'h.json': lines(
            '{"s":{"at":"2024-01-02T03:04:05Z","n":1,"d":1.5},"a":["2024-01-02",null],"m":{"k":1,"K":9007199254740993},"b":"aGk=","big":123456789012345678901234567890}',
            '{"s":{"at":"2024-01-02","n":1},"a":["x"],"m":{"k":"v"},"b":"not base64!","big":1.5}',
          ),
        },
        columns: [
          ['s', 'struct<at:timestamp,n:integer,d:decimal(5,2)>'],
          ['a', 'array<date>'],
          ['m', 'map<string,long>'],
          ['b', 'binary'],
          ['big', 'decimal(38,0)'],
        ],
        rows: {
          'h.json': [
            {
              s: { at: '2024-01-02T03:04:05.000000Z', n: 1, d: '1.50' },
              a: ['2024-01-02', null],
              m: [
                ['k', 1],
                ['K', 9007199254740993n],
              ],
              b: '6869',
              big: '123456789012345678901234567890',
            },
            {
              _rescued_data: rescued(
                {
                  s: { at: '2024-01-02', n: 1 },
                  a: ['x'],
                  m: { k: 'v' },
                  b: 'not base64!',
                  big: literal('1.5'),
                },
                {
                  s: because.misfit('struct<at:timestamp,n:integer,d:decimal(5,2)>'),
                  a: because.misfit('array<date>'),
                  m: because.misfit('map<string,long>'),
                  b: because.misfit('binary'),
                  big: because.misfit('decimal(38,0)'),
                },
              ),
            },
          ],
        },
      },
    ],
  },
];

/**
 * Every bronze table shape the sink makes, each read by Spark + Delta Lake and by delta-rs
 * (engines.test.ts). A shape is its landing files per manifest version, its bronze config and the rows
 * each file must give (shape.ts); add one here and both engines check it: every version by time travel,
 * a streaming read, the history, and checkpoints when it has them.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import {
  because,
  type Columns,
  corrupt,
  type ExpectedRow,
  rescued,
  type Shape,
  type VersionSpec,
} from './shape.ts';
import { LOG_SHAPES } from './shapes-log.ts';
import { PARQUET_SHAPES } from './shapes-parquet.ts';
import { PARTITION_SHAPES } from './shapes-partitions.ts';
import { STATS_SHAPES } from './shapes-stats.ts';
import { TYPE_SHAPES } from './shapes-types.ts';
import { VALUE_SHAPES } from './shapes-values.ts';
import { WIDENING_SHAPES } from './shapes-widening.ts';

const jsonl = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
const parquet = (columnData: Parameters<typeof parquetWriteBuffer>[0]['columnData']) =>
  new Uint8Array(parquetWriteBuffer({ columnData, rowGroupSize: 2 }));

const ID: Columns = [['id', 'long']];

/** A version of one file whose rows are `{n}` for each n: the filler of shapes about the log, not values. */
const counted = (key: string, ns: readonly number[], extra: Record<string, unknown> = {}) => ({
  files: { [key]: jsonl(...ns.map((n) => ({ n, ...extra }))) },
  rows: { [key]: ns.map((n) => ({ n, ...extra }) as ExpectedRow) },
});

/** 96 hex digits of a pseudo-random sequence: text Snappy cannot shrink, so data files fill up. */
function noise(i: number): string {
  let x = i + 1;
  let out = '';
  for (let k = 0; k < 12; k++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += x.toString(16).padStart(8, '0');
  }
  return out;
}

/** Throws unless `ok`: the table is no longer the shape its name says (a default or a size changed). */
function claim(ok: boolean, what: string): void {
  if (!ok) throw new Error(`the table is not the shape it claims: ${what}`);
}

/** A line past the 8 MiB record cap, and an unparseable one past the 64 KiB kept of it. */
const HUGE_LINE = `{"blob":"${'x'.repeat(8 * 1024 * 1024)}"}`;
const LONG_GARBAGE = `not json ${'y'.repeat(100 * 1024)}`;

const BIG = Array.from({ length: 25_000 }, (_, i) => i);

/** Values that read back as they were written: longs to 2^53-1, doubles at the ends of their range, text. */
const SCALARS = {
  id: 1,
  big: 2 ** 53 - 1,
  neg: -42,
  ratio: 0.1,
  tiny: 5e-324,
  huge: 1.7976931348623157e308,
  ok: true,
  text: 'ünï "quoted" \\ back\nline\ttab 😀',
  empty: '',
} as const;

const awkwardKeys = ['a b+c é.json', '100%=x;y:z&q?.json', 'dir/sub dir/ü ☃.json', 'x#y,[1]{2}.json'];

export const SHAPES: readonly Shape[] = [
  {
    name: 'jsonl-drift-and-bad-records',
    // With symlink manifests: Spark's GENERATE must list the same files (engines.test.ts).
    bronze: { format: 'jsonl', schemaHints: { zip: 'string' }, symlinkManifest: true },
    versions: [
      {
        files: { 'a.json': '{"id":1,"zip":"01234","amount":2.5}\n{"id":2,"zip":"9","amount":3}\n' },
        columns: [...ID, ['zip', 'string'], ['amount', 'double']],
        rows: {
          'a.json': [
            { id: 1, zip: '01234', amount: 2.5 },
            { id: 2, zip: '9', amount: 3 },
          ],
        },
      },
      {
        files: {
          'b.json':
            '{"id":3,"amount":"lots","color":"red"}\nnot json at all\n{"id":4,"color":"blue"}\n\n[1,2]\n',
        },
        columns: [...ID, ['zip', 'string'], ['amount', 'double'], ['color', 'string']],
        rows: {
          'b.json': [
            {
              id: 3,
              color: 'red',
              _rescued_data: rescued({ amount: 'lots' }, { amount: because.misfit('double') }),
            },
            { _rescued_data: corrupt('not json at all', /^not JSON/) },
            { id: 4, color: 'blue' },
            { _rescued_data: corrupt('[1,2]', /must be an object/) },
          ],
        },
      },
    ],
  },
  {
    name: 'json-values-and-names',
    // Objects and arrays kept as their JSON text (nested: jsonText, docs/bronze.md "JSON and CSV").
    bronze: { format: 'json', nested: 'jsonText' },
    versions: [
      {
        files: {
          'v.json': jsonl(
            {
              ...SCALARS,
              obj: { a: [1, { b: null }] },
              list: [1, 'two', false],
              'bad name': 'x',
              'a=b': 2,
              _source_file: 'spoofed',
            },
            { id: 2, big: -(2 ** 53) + 1, ratio: 3, ok: false, text: null, never: null },
          ),
        },
        columns: [
          ...ID,
          ['big', 'long'],
          ['neg', 'long'],
          ['ratio', 'double'],
          ['tiny', 'double'],
          ['huge', 'double'],
          ['ok', 'boolean'],
          ['text', 'string'],
          ['empty', 'string'],
          ['obj', 'string'],
          ['list', 'string'],
          ['never', 'string'],
        ],
        rows: {
          'v.json': [
            {
              ...SCALARS,
              obj: '{"a":[1,{"b":null}]}',
              list: '[1,"two",false]',
              _rescued_data: rescued(
                { 'bad name': 'x', 'a=b': 2, _source_file: 'spoofed' },
                {
                  'bad name': because.badName,
                  'a=b': because.badName,
                  _source_file: because.sinkColumn('_source_file'),
                },
              ),
            },
            { id: 2, big: -(2 ** 53) + 1, ratio: 3, ok: false },
          ],
        },
      },
    ],
  },
  {
    name: 'json-array-documents',
    bronze: { format: 'json' },
    versions: [
      {
        files: {
          'doc.json': '[\n  {"id": 1, "tags": ["a", "b"]},\n  {"id": 2, "tags": []},\n  7\n]\n',
          'lines.json': '{"id": 3}\n',
        },
        columns: [...ID, ['tags', 'array<string>']],
        rows: {
          'doc.json': [
            { id: 1, tags: ['a', 'b'] },
            { id: 2, tags: [] },
            { _rescued_data: corrupt('7', /must be an object/) },
          ],
          'lines.json': [{ id: 3 }],
        },
      },
      {
        files: { 'doc2.json': '[{"id": 4, "tags": null, "extra": 1.5}]', 'broken.json': '[{"id": 5},' },
        columns: [...ID, ['tags', 'array<string>'], ['extra', 'double']],
        rows: {
          'doc2.json': [{ id: 4, extra: 1.5 }],
          'broken.json': [{ _rescued_data: corrupt('[{"id": 5},', /^not JSON/) }],
        },
      },
    ],
  },
  {
    name: 'csv-header-quotes-and-short-rows',
    bronze: { format: 'csv', schemaHints: { zip: 'string' } },
    versions: [
      {
        files: {
          '1.csv':
            'id,name,zip,ok,note,id\n1,ann,01234,true,"a, b",10\n2,bob,9,false,"say ""hi""\nthere",20\n3,,,,,\n',
        },
        columns: [
          ...ID,
          ['name', 'string'],
          ['zip', 'string'],
          ['ok', 'boolean'],
          ['note', 'string'],
          ['id_2', 'long'],
        ],
        rows: {
          '1.csv': [
            { id: 1, name: 'ann', zip: '01234', ok: true, note: 'a, b', id_2: 10 },
            { id: 2, name: 'bob', zip: '9', ok: false, note: 'say "hi"\nthere', id_2: 20 },
            { id: 3 },
          ],
        },
      },
      {
        files: { '2.csv': 'id,name,score\n4,cy,9.5\n5,dee\nx,eve,1e3\n' },
        columns: [
          ...ID,
          ['name', 'string'],
          ['zip', 'string'],
          ['ok', 'boolean'],
          ['note', 'string'],
          ['id_2', 'long'],
          ['score', 'double'],
        ],
        rows: {
          '2.csv': [
            { id: 4, name: 'cy', score: 9.5 },
            { _rescued_data: corrupt('5,dee', /2 fields where the header has 3/) },
            { name: 'eve', score: 1000, _rescued_data: rescued({ id: 'x' }, { id: because.misfit('long') }) },
          ],
        },
      },
    ],
  },
  {
    name: 'parquet-input',
    bronze: { format: 'parquet' },
    versions: [
      {
        files: {
          'a.parquet': parquet([
            { name: 'id', data: [1n, 2n ** 60n + 1n, -3n], type: 'INT64' },
            { name: 'price', data: [9.5, null, 1], type: 'DOUBLE' },
            { name: 'ok', data: [true, null, false], type: 'BOOLEAN' },
            { name: 'note', data: [null, null, null], type: 'INT32' },
            { name: 'label', data: ['x', 'ü', null], type: 'STRING' },
          ]),
        },
        // An all-null INT32 keeps its declared type (docs/bronze.md, "Parquet").
        columns: [...ID, ['price', 'double'], ['ok', 'boolean'], ['note', 'integer'], ['label', 'string']],
        rows: {
          'a.parquet': [
            { id: 1, price: 9.5, ok: true, label: 'x' },
            { id: 2n ** 60n + 1n, label: 'ü' },
            { id: -3, price: 1, ok: false },
          ],
        },
      },
      {
        files: {
          'b.parquet': parquet([
            { name: 'id', data: ['x7', '4'], type: 'STRING' },
            { name: 'city', data: ['Oslo', null], type: 'STRING' },
          ]),
          'not-parquet.parquet': 'just text',
        },
        columns: [
          ...ID,
          ['price', 'double'],
          ['ok', 'boolean'],
          ['note', 'integer'],
          ['label', 'string'],
          ['city', 'string'],
        ],
        rows: {
          'b.parquet': [
            { city: 'Oslo', _rescued_data: rescued({ id: 'x7' }, { id: because.misfit('long') }) },
            { _rescued_data: rescued({ id: '4' }, { id: because.misfit('long') }) },
          ],
          'not-parquet.parquet': [{ _rescued_data: corrupt('<9 bytes>', /^not a Parquet file/) }],
        },
      },
    ],
  },
  {
    name: 'evolution-rescue',
    bronze: { format: 'jsonl', evolution: 'rescue' },
    versions: [
      { files: { 'a.json': jsonl({ id: 1 }) }, columns: ID, rows: { 'a.json': [{ id: 1 }] } },
      {
        files: { 'b.json': jsonl({ id: 2, color: 'red' }, { id: 'three' }) },
        rows: {
          'b.json': [
            { id: 2, _rescued_data: rescued({ color: 'red' }, { color: because.keptOut }) },
            { _rescued_data: rescued({ id: 'three' }, { id: because.misfit('long') }) },
          ],
        },
      },
    ],
  },
  {
    name: 'evolution-none',
    bronze: { format: 'jsonl', evolution: 'none' },
    versions: [
      { files: { 'a.json': jsonl({ id: 1 }) }, columns: ID, rows: { 'a.json': [{ id: 1 }] } },
      {
        files: { 'b.json': jsonl({ id: 2, color: 'red' }, { id: 3.5 }) },
        rows: {
          'b.json': [{ id: 2 }, { _rescued_data: rescued({ id: 3.5 }, { id: because.misfit('long') }) }],
        },
      },
    ],
  },
  {
    name: 'evolution-failOnNewColumns',
    bronze: { format: 'jsonl', evolution: 'failOnNewColumns', schemaHints: { later: 'double' } },
    versions: [
      {
        files: { 'a.json': jsonl({ id: 1 }) },
        columns: [...ID, ['later', 'double']],
        rows: { 'a.json': [{ id: 1 }] },
      },
      {
        files: { 'b.json': jsonl({ id: 2, later: 0.5 }, { id: false }) },
        rows: {
          'b.json': [
            { id: 2, later: 0.5 },
            { _rescued_data: rescued({ id: false }, { id: because.misfit('long') }) },
          ],
        },
      },
    ],
  },
  {
    name: 'awkward-source-keys',
    bronze: { format: 'jsonl' },
    versions: [
      {
        files: Object.fromEntries(awkwardKeys.map((key, i) => [key, jsonl({ i })])),
        columns: [['i', 'long']],
        rows: Object.fromEntries(awkwardKeys.map((key, i) => [key, [{ i }]])),
      },
    ],
  },
  {
    name: 'several-data-files-per-version',
    bronze: { format: 'jsonl', maxFileBytes: 1024 * 1024 },
    // A file closes after the row group (10,000 rows) that passes maxFileBytes: 25,000 rows of about
    // 110 bytes make more than one at the product's smallest size.
    versions: [
      {
        files: { 'big.json': jsonl(...BIG.map((id) => ({ id, text: noise(id) }))) },
        columns: [...ID, ['text', 'string']],
        rows: { 'big.json': BIG.map((id) => ({ id, text: noise(id) })) },
      },
      { files: { 'small.json': jsonl({ id: -1 }) }, rows: { 'small.json': [{ id: -1 }] } },
    ],
    written: async (t) => {
      const adds = (await t.commit(0)).filter((action) => action.add).length;
      claim(adds >= 2, `version 0 has ${adds} data file(s)`);
    },
  },
  {
    name: 'checkpoints-every-2-versions',
    bronze: { format: 'jsonl', checkpointInterval: 2 },
    // Checkpoints at Delta versions 2 and 4; the schema grows at 3, between them.
    versions: [1, 2, 3, 4, 5].map((v): VersionSpec => {
      const extra: ExpectedRow = v >= 4 ? { extra: v + 0.5 } : {};
      return {
        files: { [`r${v}.json`]: `${jsonl({ n: v }, { n: v * 10, tag: `t${v}`, ...extra })}broken ${v}\n` },
        ...(v === 1
          ? {
              columns: [
                ['n', 'long'],
                ['tag', 'string'],
              ] as Columns,
            }
          : {}),
        ...(v === 4
          ? {
              columns: [
                ['n', 'long'],
                ['tag', 'string'],
                ['extra', 'double'],
              ] as Columns,
            }
          : {}),
        rows: {
          [`r${v}.json`]: [
            { n: v },
            { n: v * 10, tag: `t${v}`, ...extra },
            { _rescued_data: corrupt(`broken ${v}`) },
          ],
        },
      };
    }),
  },
  {
    name: 'checkpoint-every-version',
    bronze: { format: 'jsonl', checkpointInterval: 1 },
    versions: [
      { ...counted('a.json', [1, 2]), columns: [['n', 'long']] },
      counted('b.json', [3]),
      counted('c.json', [4, 5]),
    ],
  },
  {
    name: 'empty-version-and-missing-sources',
    bronze: { format: 'jsonl' },
    versions: [
      { ...counted('a.json', [1]), columns: [['n', 'long']] },
      {
        files: { 'gone.json': jsonl({ n: 2 }) },
        rows: {},
        beforeSink: (t) => t.deleteLanding('gone.json'),
      },
      {
        files: { 'c.json': jsonl({ n: 3 }), 'also-gone.json': jsonl({ n: 4 }) },
        rows: { 'c.json': [{ n: 3 }] },
        beforeSink: (t) => t.deleteLanding('also-gone.json'),
      },
    ],
  },
  {
    name: 'first-version-empty',
    bronze: { format: 'jsonl' },
    versions: [
      {
        files: { 'gone.json': jsonl({ n: 1 }) },
        columns: [],
        rows: {},
        beforeSink: (t) => t.deleteLanding('gone.json'),
      },
      { ...counted('b.json', [2, 3]), columns: [['n', 'long']] },
    ],
  },
  {
    name: 'clean-source-move',
    bronze: (landing) => ({
      format: 'jsonl',
      cleanSource: { action: 'move', moveTo: `s3://${landing}/archive`, retentionDays: 0 },
    }),
    versions: [{ ...counted('a b+c é.json', [1]), columns: [['n', 'long']] }, counted('d.json', [2, 3])],
    written: async (t) => {
      const keys = (await t.landingKeys()).sort();
      // An archive key is `<moveTo prefix>/<source bucket>/<key>` (docs/bronze.md, cleanSource).
      const archived = ['a b+c é.json', 'd.json'].map((f) => `archive/${t.landingBucket}/events/${f}`);
      claim(keys.join() === archived.join(), `landing bucket holds ${keys.join(', ')}`);
    },
  },
  {
    name: 'oversized-and-clipped-records',
    bronze: { format: 'jsonl' },
    versions: [
      {
        files: { 'long.json': `{"id":1}\n${HUGE_LINE}\n${LONG_GARBAGE}\n{"id":2}\n` },
        columns: ID,
        rows: {
          'long.json': [
            { id: 1 },
            { _rescued_data: corrupt(HUGE_LINE.slice(0, 64 * 1024), /^record longer than/) },
            { _rescued_data: corrupt(LONG_GARBAGE.slice(0, 64 * 1024), /^not JSON/) },
            { id: 2 },
          ],
        },
      },
    ],
  },
  ...VALUE_SHAPES,
  ...TYPE_SHAPES,
  ...PARQUET_SHAPES,
  ...LOG_SHAPES,
  ...STATS_SHAPES,
  ...PARTITION_SHAPES,
  ...WIDENING_SHAPES,
];

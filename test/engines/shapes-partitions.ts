/**
 * Partitioned tables (docs/bronze.md, "Partitions"): each version's rows split into one data file per
 * partition value, under `col=value/` directories escaped as Spark escapes them, the values in each `add`'s
 * `partitionValues`. Both engines must read every value back exactly (spaces, `/`, `=`, `%`, a tab,
 * non-ASCII, null, an empty string rescued) and prune by the partition column: a filter on it scans only
 * that partition's files, from the JSON log and through the checkpoint.
 */
import { because, type Columns, rescued, type Shape } from './shape.ts';

const jsonl = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

const COLUMNS: Columns = [
  ['id', 'long'],
  ['region', 'string'],
];

/** A value with every character Spark's path escaping escapes that a SQL literal can hold simply. */
const AWKWARD = `#?*:"[]{}^\\ tab\there`;

export const PARTITION_SHAPES: readonly Shape[] = [
  {
    name: 'partitioned-escaped-values',
    // A checkpoint at version 2: pruning must work from its partitionValues too.
    bronze: {
      format: 'jsonl',
      schemaHints: { region: 'string' },
      partitionBy: ['region'],
      checkpointInterval: 2,
    },
    versions: [
      {
        files: {
          'a.json': jsonl({ id: 1, region: 'a b' }, { id: 2, region: 'x/y' }, { id: 3, region: 'k=v' }),
        },
        columns: COLUMNS,
        rows: {
          'a.json': [
            { id: 1, region: 'a b' },
            { id: 2, region: 'x/y' },
            { id: 3, region: 'k=v' },
          ],
        },
      },
      {
        files: {
          'b.json': jsonl(
            { id: 4, region: '100%' },
            { id: 5, region: 'ünï ☃' },
            { id: 6 },
            { id: 7, region: '' },
            { id: 8, region: 12 },
          ),
        },
        rows: {
          'b.json': [
            { id: 4, region: '100%' },
            { id: 5, region: 'ünï ☃' },
            { id: 6 },
            {
              id: 7,
              _rescued_data: rescued(
                { region: '' },
                {
                  region:
                    "an empty string partition value reads as null (Delta's partition value serialization)",
                },
              ),
            },
            // A number fits a string column as its text (docs/bronze.md, "JSON and CSV").
            { id: 8, region: '12' },
          ],
        },
      },
      {
        files: { 'c.json': jsonl({ id: 9, region: 'a b' }, { id: 10, region: AWKWARD }) },
        rows: {
          'c.json': [
            { id: 9, region: 'a b' },
            { id: 10, region: AWKWARD },
          ],
        },
      },
    ],
    // 3 + 4 (100%, ünï ☃, null, 12) + 2.
    files: 9,
    skipping: [
      { predicate: "region = 'x/y'", files: 1, rows: 1 },
      { predicate: "region = 'a b'", files: 2, rows: 2 },
      { predicate: "region = '100%'", files: 1, rows: 1 },
      { predicate: "region = 'k=v'", files: 1, rows: 1 },
      { predicate: "region = 'ünï ☃'", files: 1, rows: 1 },
      { predicate: 'region IS NULL', files: 1, rows: 2 },
    ],
    written: async (table) => {
      const adds = (await table.commit(2)).flatMap((a) => (a.add ? [a.add] : []));
      const paths = adds.map((a) => String(a.path).split('/part-')[0]).sort();
      // add.path is a URI: the directory's own escapes (%23...) are escaped again (%2523...).
      const want = [
        'region=a%20b',
        'region=%2523%253F%252A%253A%2522%255B%255D%257B%7D%255E%255C%20tab%2509here',
      ];
      if (JSON.stringify(paths) !== JSON.stringify(want.sort()))
        throw new Error(`the table is not the shape it claims: paths ${JSON.stringify(paths)}`);
    },
  },
  {
    name: 'partitioned-by-ingestion-date',
    bronze: { format: 'jsonl', partitionBy: ['_ingest_date'] },
    versions: [
      {
        files: { 'a.json': jsonl({ id: 1 }, { id: 2, _ingest_date: '1999-01-01' }) },
        columns: [['id', 'long']],
        rows: {
          'a.json': [
            { id: 1 },
            {
              id: 2,
              _rescued_data: rescued(
                { _ingest_date: '1999-01-01' },
                { _ingest_date: because.sinkColumn('_ingest_date') },
              ),
            },
          ],
        },
      },
      { files: { 'b.json': jsonl({ id: 3 }) }, rows: { 'b.json': [{ id: 3 }] } },
    ],
    skipping: [
      { predicate: "_ingest_date < '2000-01-01'", files: 0, rows: 0 },
      { predicate: "_ingest_date >= '2000-01-01'", files: 2, rows: 3 },
    ],
  },
];

/**
 * Data skipping (docs/bronze.md, "Data skipping statistics"): each version one Parquet landing file whose
 * ids, instants and names lie apart from the other files', so a selective filter needs one file. Both engines
 * must read the `add` actions' stats and scan only the files that can match, from the JSON log and from the
 * checkpoint at the last version (which then describes every file): never fewer (a bound too tight loses
 * rows: the instant filter sits between a file's last millisecond and its last microsecond, the name filter
 * on a name longer than the 32-character prefix the bounds keep), and delta-rs must parse the bounds written.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import { structOf } from '../../shared/bronze/delta-types.ts';
import { parquetElements } from '../../shared/bronze/parquet-file.ts';
import type { Columns, ExpectedRow, Shape, VersionSpec } from './shape.ts';

const GEO = structOf([
  { name: 'zip', type: 'string' },
  { name: 'n', type: 'long' },
]);

const COLUMNS: Columns = [
  ['id', 'long'],
  ['ts', 'timestamp'],
  ['name', 'string'],
  ['geo', 'struct<zip:string,n:long>'],
];

/** 40 characters: longer than the bounds' 32-character prefix. */
const longName = (word: string, i: number) => `${word}-customer-with-a-long-name-number-${i}`.padEnd(40, '.');

/** Microseconds since the epoch of `iso` (whole seconds) plus `micros`. */
const at = (iso: string, micros: number) => BigInt(Date.parse(iso)) * 1000n + BigInt(micros);
const isoMicros = (us: bigint) => {
  const ms = Number(us / 1000n);
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(us % 1_000_000n).padStart(6, '0')}Z`;
};

/** One version: a Parquet file of three rows. */
function version(index: number, word: string, day: string): VersionSpec {
  const ids = [1, 2, 3].map((i) => BigInt(index * 100 + i));
  const n = (i: number) => index * 100 + i;
  // The last instant of each file ends in microseconds: its max bound rounds up to the next millisecond.
  const times = [at(`${day}T08:00:00Z`, 0), at(`${day}T09:30:00Z`, 500), at(`${day}T10:00:00Z`, 123_456)];
  const names = [1, 2, 3].map((i) => longName(word, i));
  const geos = [1, 2, 3].map((i) => ({ zip: `0${index}5${i}`, n: BigInt(index * 100 + i) }));
  const schema = [
    { name: 'root', num_children: 4 },
    ...parquetElements('id', 'long', 'OPTIONAL'),
    ...parquetElements('ts', 'timestamp', 'OPTIONAL'),
    ...parquetElements('name', 'string', 'OPTIONAL'),
    ...parquetElements('geo', GEO, 'OPTIONAL'),
  ];
  const key = `v${index}.parquet`;
  const rows: ExpectedRow[] = [0, 1, 2].map((i) => ({
    id: n(i + 1),
    ts: isoMicros(times[i] as bigint),
    name: names[i] as string,
    geo: { zip: (geos[i] as { zip: string }).zip, n: n(i + 1) },
  }));
  const bytes = new Uint8Array(
    parquetWriteBuffer({
      schema,
      columnData: [
        { name: 'id', data: ids },
        { name: 'ts', data: times },
        { name: 'name', data: names },
        { name: 'geo', data: geos },
      ],
    }),
  );
  return { files: { [key]: bytes }, rows: { [key]: rows }, ...(index === 1 ? { columns: COLUMNS } : {}) };
}

export const STATS_SHAPES: readonly Shape[] = [
  {
    name: 'data-skipping-stats',
    // A checkpoint at the last version (Delta 2): read from it, every file's stats come from its `stats`.
    bronze: { format: 'parquet', checkpointInterval: 2 },
    versions: [
      version(1, 'alpha', '2024-01-01'),
      version(2, 'beta', '2024-01-02'),
      version(3, 'gamma', '2024-01-03'),
    ],
    skipping: [
      { predicate: 'id >= 301', files: 1, rows: 3 },
      { predicate: 'id = 150', files: 0, rows: 0 },
      // File 2's last instant is 10:00:00.123456, past the millisecond its bound is written at.
      { predicate: "ts > '2024-01-02T10:00:00.123400Z'", files: 2, rows: 4 },
      { predicate: `name = '${longName('beta', 2)}'`, files: 1, rows: 1 },
      { predicate: '_manifest_version = 2', files: 1, rows: 3 },
      { predicate: 'geo.n > 250', files: 1, rows: 3, engines: ['spark'] },
    ],
    // What delta-rs parses from the stats of the file of version 2 (`get_add_actions(flatten=True)`): the
    // instant maximum rounded up to the millisecond, the names cut to 32 characters (the maximum's last one
    // raised to U+007F).
    addStats: [
      {},
      {
        num_records: '3',
        'min.id': '201',
        'max.id': '203',
        'null_count.id': '0',
        'min.ts': '2024-01-02T08:00:00+00:00',
        'max.ts': '2024-01-02T10:00:00.124000+00:00',
        'min.name': longName('beta', 1).slice(0, 32),
        'max.name': `${longName('beta', 3).slice(0, 32)}\x7f`,
        'min.geo.n': '201',
        'max.geo.n': '203',
        'null_count._rescued_data': '3',
        'min._manifest_version': '2',
      },
      {},
    ],
  },
];

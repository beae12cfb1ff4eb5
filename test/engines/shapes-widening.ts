/**
 * Type widening (docs/bronze.md, "Type widening"): a table with `typeWidening: true` whose hinted `integer`,
 * `decimal(5,2)` and `float` columns receive values only `long`, `decimal(9,2)` (then `decimal(12,2)`) and
 * `double` hold. The sink widens each in the commit that writes the value; the data files written before keep
 * their physical types (INT32, a 5-digit decimal, FLOAT), which Spark with Delta Lake 4.0 reads as the wider
 * type, every value exact, and prunes by their old stats. delta-rs (deltalake 1.x) lacks the `typeWidening`
 * reader feature: it reads the version before the first widening and must refuse every later one with a
 * clear error, never read them wrong. A Spark stream started after a widening reads the table; one resumed
 * across a type change stops until its user acknowledges it (Delta's `allowSourceColumnTypeChange`), as
 * Delta does for every widened table.
 */
import { because, type Columns, rescued, type Shape } from './shape.ts';

const jsonl = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

const hinted = (n: string, amount: string, ratio: string): Columns => [
  ['n', n],
  ['amount', amount],
  ['ratio', ratio],
];

export const WIDENING_SHAPES: readonly Shape[] = [
  {
    name: 'type-widening',
    bronze: {
      format: 'jsonl',
      typeWidening: true,
      // A checkpoint at the last version: Spark reads the widened schema and old stats through it too.
      checkpointInterval: 2,
      schemaHints: { n: 'integer', amount: 'decimal(5,2)', ratio: 'float' },
    },
    versions: [
      {
        files: {
          'a.json': jsonl(
            { n: 1, amount: 1.5, ratio: 0.5 },
            { n: -2147483648, amount: -999.99, ratio: 0.25 },
          ),
        },
        columns: hinted('integer', 'decimal(5,2)', 'float'),
        rows: {
          'a.json': [
            { n: 1, amount: '1.50', ratio: 0.5 },
            { n: -2147483648, amount: '-999.99', ratio: 0.25 },
          ],
        },
      },
      {
        files: {
          'b.json': jsonl(
            { n: 2 ** 40, amount: 1234567.25, ratio: Math.PI },
            { n: 7, amount: 0.5, ratio: 0.5 },
          ),
        },
        columns: hinted('long', 'decimal(9,2)', 'double'),
        rows: {
          'b.json': [
            { n: 2 ** 40, amount: '1234567.25', ratio: Math.PI },
            { n: 7, amount: '0.50', ratio: 0.5 },
          ],
        },
      },
      {
        // A second widening of one column (its typeChanges grow), and what no widening holds: rescued.
        files: { 'c.json': jsonl({ n: 2 ** 53 - 1, amount: 1234567890.5 }, { n: 'x', amount: 'lots' }) },
        columns: hinted('long', 'decimal(12,2)', 'double'),
        rows: {
          'c.json': [
            { n: 2 ** 53 - 1, amount: '1234567890.50' },
            {
              _rescued_data: rescued(
                { n: 'x', amount: 'lots' },
                { n: because.misfit('long'), amount: because.misfit('decimal(12,2)') },
              ),
            },
          ],
        },
      },
    ],
    // The pre-widening files' stats (an INT32 column's bounds) still prune the widened column.
    skipping: [{ predicate: 'n >= 1000000000000', files: 2, rows: 2, engines: ['spark'] }],
    refused: {
      deltaRs: {
        fromVersion: 1,
        error: /reader features: \{'typeWidening'\} but these are not yet supported by the deltalake reader/,
      },
      sparkStream: /DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG/,
    },
  },
];

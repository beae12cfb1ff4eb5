/**
 * Shapes of values (docs/bronze.md, "Column names" and "JSON and CSV"): keys that differ only
 * by case from a column, from a key seen earlier or from a column the sink adds, which must be rescued
 * rather than make the table unreadable; and JSON numbers no double holds, which must be kept or rescued
 * as their exact literal, never rounded.
 */
import { because, type Columns, literal, rescued, type Shape } from './shape.ts';

const lines = (...records: readonly string[]) => records.map((r) => `${r}\n`).join('');

export const VALUE_SHAPES: readonly Shape[] = [
  {
    name: 'json-keys-differing-by-case',
    // The hint claims its spelling: a key `zip` is rescued, not a second column.
    bronze: { format: 'jsonl', schemaHints: { Zip: 'string' } },
    versions: [
      {
        files: {
          'a.json': lines(
            '{"id":1,"name":"ann","Color":"red","color":"RED","zip":"01234"}',
            '{"id":2,"_Source_File":"mine","_Manifest_Version":7,"_RESCUED_DATA":{"a":[1.5]}}',
            '{"id":3,"Zip":"9"}',
          ),
        },
        columns: [
          ['id', 'long'],
          ['name', 'string'],
          ['Color', 'string'],
          ['Zip', 'string'],
        ],
        rows: {
          'a.json': [
            {
              id: 1,
              name: 'ann',
              Color: 'red',
              _rescued_data: rescued(
                { color: 'RED', zip: '01234' },
                { color: because.caseOf('Color'), zip: because.caseOf('Zip') },
              ),
            },
            {
              id: 2,
              _rescued_data: rescued(
                { _Source_File: 'mine', _Manifest_Version: 7, _RESCUED_DATA: { a: [1.5] } },
                {
                  _Source_File: because.sinkColumn('_source_file'),
                  _Manifest_Version: because.sinkColumn('_manifest_version'),
                  _RESCUED_DATA: because.sinkColumn('_rescued_data'),
                },
              ),
            },
            { id: 3, Zip: '9' },
          ],
        },
      },
      {
        // A later file: `Name` beside the column `name`; `Size` is new, so `size` and `SIZE` after it are
        // rescued against it (the first spelling in the version is the column).
        files: {
          'b.json': lines(
            '{"id":4,"Name":"bob"}',
            '{"id":5,"name":"cy","NAME":"CY","Size":1}',
            '{"id":6,"size":2,"SIZE":3}',
          ),
        },
        columns: [
          ['id', 'long'],
          ['name', 'string'],
          ['Color', 'string'],
          ['Zip', 'string'],
          ['Size', 'long'],
        ],
        rows: {
          'b.json': [
            { id: 4, _rescued_data: rescued({ Name: 'bob' }, { Name: because.caseOf('name') }) },
            {
              id: 5,
              name: 'cy',
              Size: 1,
              _rescued_data: rescued({ NAME: 'CY' }, { NAME: because.caseOf('name') }),
            },
            {
              id: 6,
              _rescued_data: rescued(
                { size: 2, SIZE: 3 },
                { size: because.caseOf('Size'), SIZE: because.caseOf('Size') },
              ),
            },
          ],
        },
      },
    ],
  },
  {
    name: 'csv-header-differing-by-case',
    bronze: { format: 'csv' },
    versions: [
      {
        // CSV fields are text: the rescued `ID` keeps its exact text, leading zeros too.
        files: { '1.csv': 'Id,ID,x\n1,2,a\n3,0042,b\n' },
        columns: [
          ['Id', 'long'],
          ['x', 'string'],
        ],
        rows: {
          '1.csv': [
            { Id: 1, x: 'a', _rescued_data: rescued({ ID: '2' }, { ID: because.caseOf('Id') }) },
            { Id: 3, x: 'b', _rescued_data: rescued({ ID: '0042' }, { ID: because.caseOf('Id') }) },
          ],
        },
      },
      {
        files: { '2.csv': 'id,X\n4,c\n' },
        rows: {
          '2.csv': [
            {
              _rescued_data: rescued(
                { id: '4', X: 'c' },
                { id: because.caseOf('Id'), X: because.caseOf('x') },
              ),
            },
          ],
        },
      },
    ],
  },
  {
    // A CSV field left empty is null (docs/bronze.md, "JSON and CSV"), and a null holds nothing to rescue
    // ("Columns"): not in a column, and not in a key that is rescued (a case twin, a column kept out).
    name: 'csv-empty-fields-never-rescued',
    bronze: { format: 'csv', evolution: 'rescue' },
    versions: [
      {
        files: { '1.csv': 'a,b\n1,x\n' },
        columns: [
          ['a', 'long'],
          ['b', 'string'],
        ],
        rows: { '1.csv': [{ a: 1, b: 'x' }] },
      },
      {
        files: { '2.csv': 'a,b,c,B\n2,,,\n3,y,z,Y\n' },
        rows: {
          '2.csv': [
            { a: 2 },
            {
              a: 3,
              b: 'y',
              _rescued_data: rescued({ c: 'z', B: 'Y' }, { c: because.keptOut, B: because.caseOf('b') }),
            },
          ],
        },
      },
    ],
  },
  {
    name: 'json-numbers-exact',
    bronze: { format: 'jsonl' },
    versions: [
      {
        // A column of numbers no Delta type holds is `string`, each its literal.
        files: {
          'n.json': lines(
            '{"id":9007199254740993,"ratio":0.5,"exact":3.141592653589793238}',
            '{"id":-9223372036854775808,"ratio":1.0,"exact":1e400}',
            '{"id":9223372036854775807,"ratio":1e3}',
          ),
        },
        columns: [
          ['id', 'long'],
          ['ratio', 'double'],
          ['exact', 'string'],
        ] as Columns,
        rows: {
          'n.json': [
            { id: 9007199254740993n, ratio: 0.5, exact: '3.141592653589793238' },
            { id: -9223372036854775808n, ratio: 1, exact: '1e400' },
            { id: 9223372036854775807n, ratio: 1000 },
          ],
        },
      },
      {
        files: {
          'm.json': lines(
            '{"id":9223372036854775808,"ratio":3.141592653589793238,"exact":2}',
            '{"id":-9223372036854775809,"ratio":0.1,"exact":0.30000000000000004}',
            '{"id":12345678901234567,"ratio":1e400}',
          ),
        },
        rows: {
          'm.json': [
            {
              exact: '2',
              _rescued_data: rescued(
                { id: 9223372036854775808n, ratio: literal('3.141592653589793238') },
                { id: because.beyondLong, ratio: because.beyondDouble },
              ),
            },
            {
              ratio: 0.1,
              exact: '0.30000000000000004',
              _rescued_data: rescued({ id: -9223372036854775809n }, { id: because.beyondLong }),
            },
            {
              id: 12345678901234567n,
              _rescued_data: rescued({ ratio: literal('1e400') }, { ratio: because.beyondDouble }),
            },
          ],
        },
      },
    ],
  },
];

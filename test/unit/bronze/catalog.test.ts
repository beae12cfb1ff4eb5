import { describe, expect, it } from 'vitest';
import { glueDatabaseOf, localConfigOf } from '../../../local/state.ts';
import { withBronzeFields } from '../../../local/summary.ts';
import {
  CATALOG_VERSION_PARAMETER,
  catalogDatabaseName,
  catalogDatabaseProblem,
  catalogTable,
  catalogTableName,
  hiveType,
  tableQueries,
} from '../../../shared/bronze/catalog.ts';
import { CatalogProjection } from '../../../shared/bronze/catalog-sync.ts';
import { arrayOf, mapOf, structOf } from '../../../shared/bronze/delta-types.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import { OUTPUTS } from '../../../shared/kernel/names.ts';
import { MemoryCatalog } from './memory-catalog.ts';

const DB = 'inlet_bronze';
const input = (schema: TableSchema, deltaVersion = 0) => ({
  table: 'click-events',
  location: 's3://lake/click-events/_bronze',
  schema,
  deltaVersion,
});

describe('the Glue entry of a bronze table', () => {
  it('names tables and databases as Glue and Athena accept them: lowercase, letters, digits, _', () => {
    expect(catalogTableName('click-events')).toBe('click_events');
    expect(catalogTableName('orders2')).toBe('orders2');
    expect(catalogDatabaseName('Inlet-Prod')).toBe('inlet_prod_bronze');
  });

  it('a partitioned table lists its partition columns as partition keys, in partitionBy order, as Athena syncs them', () => {
    const entry = catalogTable({
      ...input([
        { name: 'region', type: 'string' },
        { name: 'id', type: 'long' },
      ]),
      partitionBy: ['region', '_ingest_date'],
    });
    expect(entry.PartitionKeys).toEqual([
      { Name: 'region', Type: 'string' },
      { Name: '_ingest_date', Type: 'date' },
    ]);
    expect(entry.StorageDescriptor.Columns.map((c) => c.Name)).toEqual([
      'id',
      '_rescued_data',
      '_source_file',
      '_manifest_version',
    ]);
  });

  it('maps every Delta type to the Hive type Spark and Athena spell', () => {
    const cases: Array<[Parameters<typeof hiveType>[0], string]> = [
      ['string', 'string'],
      ['long', 'bigint'],
      ['integer', 'int'],
      ['short', 'smallint'],
      ['byte', 'tinyint'],
      ['float', 'float'],
      ['double', 'double'],
      ['boolean', 'boolean'],
      ['binary', 'binary'],
      ['date', 'date'],
      ['timestamp', 'timestamp'],
      ['timestamp_ntz', 'timestamp'],
      ['decimal(10,2)', 'decimal(10,2)'],
      [arrayOf('long'), 'array<bigint>'],
      [mapOf('string', 'integer'), 'map<string,int>'],
      [
        structOf([
          { name: 'a', type: 'long' },
          { name: 'b', type: arrayOf('date') },
        ]),
        'struct<a:bigint,b:array<date>>',
      ],
    ];
    for (const [delta, hive] of cases) expect(hiveType(delta), JSON.stringify(delta)).toBe(hive);
  });

  it('is a native Delta table at the location, every column of the log in order, system columns last', () => {
    const entry = catalogTable(
      input(
        [
          { name: 'id', type: 'long' },
          { name: 'name', type: 'string' },
        ],
        4,
      ),
    );
    expect(entry).toMatchObject({
      Name: 'click_events',
      TableType: 'EXTERNAL_TABLE',
      PartitionKeys: [],
      Parameters: {
        EXTERNAL: 'TRUE',
        table_type: 'DELTA',
        'spark.sql.sources.provider': 'delta',
        'inlet.table': 'click-events',
        [CATALOG_VERSION_PARAMETER]: '4',
      },
      StorageDescriptor: {
        Location: 's3://lake/click-events/_bronze',
        SerdeInfo: { Parameters: { path: 's3://lake/click-events/_bronze' } },
      },
    });
    expect(entry.StorageDescriptor.Columns).toEqual([
      { Name: 'id', Type: 'bigint' },
      { Name: 'name', Type: 'string' },
      { Name: '_rescued_data', Type: 'string' },
      { Name: '_source_file', Type: 'string' },
      { Name: '_manifest_version', Type: 'bigint' },
    ]);
  });
});

describe('CatalogProjection', () => {
  const v1: TableSchema = [{ name: 'id', type: 'long' }];
  const v2: TableSchema = [...v1, { name: 'city', type: 'string' }];
  const setup = () => {
    const catalog = new MemoryCatalog();
    return { catalog, projection: new CatalogProjection({ catalog, database: DB, log: silentLog }) };
  };

  it('creates the entry when absent, then makes no Glue call while the schema stays', async () => {
    const { catalog, projection } = setup();
    expect(await projection.project(input(v1, 0))).toBe(true);
    expect(await projection.project(input(v1, 1))).toBe(true);
    expect(catalog.calls).toEqual(['get click_events', 'create click_events']);
    expect(catalog.entry(DB, 'click_events')?.StorageDescriptor.Columns.map((c) => c.Name)).toContain('id');
  });

  it('updates the entry when a column is added, and only then', async () => {
    const { catalog, projection } = setup();
    await projection.project(input(v1, 0));
    expect(await projection.project(input(v2, 3))).toBe(true);
    const entry = catalog.entry(DB, 'click_events');
    expect(entry?.StorageDescriptor.Columns.map((c) => c.Name)).toEqual([
      'id',
      'city',
      '_rescued_data',
      '_source_file',
      '_manifest_version',
    ]);
    expect(entry?.Parameters[CATALOG_VERSION_PARAMETER]).toBe('3');
    expect(catalog.calls).toEqual([
      'get click_events',
      'create click_events',
      'get click_events',
      'update click_events',
    ]);
  });

  it('a cold container that finds the entry in step writes nothing', async () => {
    const { catalog, projection } = setup();
    await projection.project(input(v1, 0));
    const cold = new CatalogProjection({ catalog, database: DB, log: silentLog });
    catalog.calls.length = 0;
    expect(await cold.project(input(v1, 7))).toBe(true);
    expect(catalog.calls).toEqual(['get click_events']);
  });

  it('a racing creator: AlreadyExists is read back and converges on one entry', async () => {
    const { catalog, projection } = setup();
    const other = new CatalogProjection({ catalog, database: DB, log: silentLog });
    // Both read "absent" before either creates.
    const [a, b] = await Promise.all([projection.project(input(v1, 0)), other.project(input(v1, 0))]);
    expect([a, b]).toEqual([true, true]);
    expect(catalog.tables.size).toBe(1);
  });

  it('never replaces an entry projected from a later log version with an older one', async () => {
    const { catalog, projection } = setup();
    await projection.project(input(v2, 5));
    const stale = new CatalogProjection({ catalog, database: DB, log: silentLog });
    expect(await stale.project(input(v1, 2))).toBe(true);
    expect(catalog.entry(DB, 'click_events')?.StorageDescriptor.Columns.map((c) => c.Name)).toContain('city');
    expect(catalog.calls.filter((c) => c.startsWith('update'))).toEqual([]);
  });

  it('an update that lost the race (stale VersionId) reads again and converges', async () => {
    const { catalog, projection } = setup();
    await projection.project(input(v1, 0));
    const v3: TableSchema = [...v2, { name: 'zip', type: 'string' }];
    let raced = false;
    catalog.beforeUpdate = () => {
      if (raced) return;
      raced = true;
      // Another sink, with the newer log, writes between this one's GetTable and UpdateTable.
      catalog.put(DB, catalogTable(input(v3, 9)), 'click_events');
    };
    expect(await projection.project(input(v2, 4))).toBe(true);
    expect(catalog.entry(DB, 'click_events')?.StorageDescriptor.Columns.map((c) => c.Name)).toContain('zip');
  });

  it('a Glue failure is reported, not thrown, and the next call repairs the entry', async () => {
    const { catalog, projection } = setup();
    catalog.failNext = 1;
    expect(await projection.project(input(v1, 0))).toBe(false);
    expect(catalog.tables.size).toBe(0);
    expect(await projection.project(input(v1, 1))).toBe(true);
    expect(catalog.entry(DB, 'click_events')).toBeDefined();
  });

  it("never overwrites a table of the same name that is not this Inlet table's", async () => {
    const { catalog, projection } = setup();
    catalog.put(
      DB,
      { Parameters: { classification: 'parquet' }, StorageDescriptor: { Location: 's3://x/y' } },
      'click_events',
    );
    expect(await projection.project(input(v1, 0))).toBe(false);
    expect(catalog.calls.filter((c) => !c.startsWith('get'))).toEqual([]);
  });
});

describe('catalog configuration', () => {
  it('refuses two catalogued tables with one Glue name, and a database name Athena cannot query', () => {
    expect(() =>
      parsePipelineConfig({
        tables: [
          { name: 'a-b', prefix: 'x/', bronze: { format: 'json' } },
          { name: 'a_b', prefix: 'y/', bronze: { format: 'json' } },
        ],
      }),
    ).toThrow(/'a_b' and 'a-b' are both 'a_b' in the Glue catalog/);
    expect(() =>
      parsePipelineConfig({
        tables: [
          { name: 'a-b', prefix: 'x/', bronze: { format: 'json' } },
          { name: 'a_b', prefix: 'y/', bronze: { format: 'json', catalog: false } },
        ],
      }),
    ).not.toThrow();
    expect(catalogDatabaseProblem('Inlet-Prod')).toMatch(/lowercase/);
    expect(catalogDatabaseProblem('inlet_prod_bronze')).toBeUndefined();
  });
});

describe('how inlet table says to query a table', () => {
  it('Athena through the Glue entry, Spark SQL and delta-rs by path', () => {
    expect(tableQueries('s3://lake/t/_bronze', { database: 'inlet_bronze', table: 'click_events' })).toEqual({
      athena: 'SELECT * FROM "inlet_bronze"."click_events" LIMIT 10',
      sparkSql: 'SELECT * FROM delta.`s3://lake/t/_bronze` LIMIT 10',
      deltaRs: 'DeltaTable("s3://lake/t/_bronze").to_pandas()',
    });
    expect(tableQueries('s3://lake/t/_bronze').athena).toBeUndefined();
  });

  it("local mode's table entries name the stack's database and each catalogued table's Glue name", () => {
    const config = parsePipelineConfig({
      tables: [
        { name: 'click-events', prefix: 'c/', bronze: { format: 'json' } },
        { name: 'quiet', prefix: 'q/', bronze: { format: 'json', catalog: false } },
        { name: 'raw', prefix: 'r/' },
      ],
    });
    const entries = withBronzeFields(config.tables, config, 'mb', 'sales_bronze');
    expect(entries.map((e) => ('catalog' in e ? e.catalog : undefined))).toEqual([
      { database: 'sales_bronze', table: 'click_events' },
      undefined,
      undefined,
    ]);
  });

  it("local.json carries the stack's real Glue database, from its output, not one guessed from the stack name", () => {
    const local = localConfigOf(
      {
        stackName: 'Inlet',
        tables: [{ name: 'orders', prefix: 'o/' }],
        outputs: { [OUTPUTS.ledgerTable]: 'l', [OUTPUTS.glueDatabase]: 'sales_bronze' },
      },
      'http://127.0.0.1:1',
      'us-east-1',
    );
    expect(local.glueDatabase).toBe('sales_bronze');
    // A stack deployed before the output existed has the default name, which is then the real one.
    const older = localConfigOf(
      { stackName: 'My-Stack', tables: [], outputs: { [OUTPUTS.ledgerTable]: 'l' } },
      'http://127.0.0.1:1',
      'us-east-1',
    );
    expect(older.glueDatabase).toBeUndefined();
    expect(glueDatabaseOf({ stackName: 'My-Stack', outputs: {} })).toBe('my_stack_bronze');
    expect(glueDatabaseOf({ stackName: 'My-Stack', outputs: { [OUTPUTS.glueDatabase]: 'x_db' } })).toBe(
      'x_db',
    );
  });
});

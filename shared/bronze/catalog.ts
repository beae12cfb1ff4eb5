import { type BronzeType, decimalOf } from './delta-types.ts';
import { type Column, type TableSchema, tableColumns } from './schema.ts';

/**
 * A bronze table as the AWS Glue Data Catalog holds it (docs/bronze.md, "Catalog"): a native Delta Lake
 * table, whose schema engines read from the Delta log at its location. Athena reads a Delta table through
 * Glue needing "only the location property"; its columns are kept in step with the log anyway, since Lake
 * Formation, views and row and column filters need the Glue schema to be the log's
 * (https://docs.aws.amazon.com/athena/latest/ug/delta-lake-tables.html,
 * https://docs.aws.amazon.com/athena/latest/ug/delta-lake-tables-syncing-metadata.html).
 */

/** One column of a Glue table: its name and Hive type string. */
export interface GlueColumn {
  readonly Name: string;
  readonly Type: string;
}

/** The fields of Glue's `TableInput` the sink writes: what it compares, and what it sends. */
export interface CatalogTable {
  readonly Name: string;
  readonly TableType: 'EXTERNAL_TABLE';
  readonly Parameters: Readonly<Record<string, string>>;
  /** Athena asks for an explicit empty list on an unpartitioned table (Glue API, `Table.PartitionKeys`). */
  readonly PartitionKeys: readonly GlueColumn[];
  readonly StorageDescriptor: {
    readonly Columns: readonly GlueColumn[];
    readonly Location: string;
    readonly SerdeInfo: {
      readonly SerializationLibrary: string;
      readonly Parameters: Readonly<Record<string, string>>;
    };
  };
}

/**
 * The Delta version of the log the entry was projected from: a sink never replaces an entry projected from
 * a later version with one from an earlier (two runs racing, docs/protocol.md "Catalog projection").
 */
export const CATALOG_VERSION_PARAMETER = 'inlet.delta_version';
/** The Inlet table the entry is for: another writer's table of the same Glue name is never overwritten. */
export const CATALOG_TABLE_PARAMETER = 'inlet.table';

/**
 * The Glue name of an Inlet table. Glue stores names lowercase ("For Hive compatibility, this must be
 * entirely lowercase", Glue API `Table.Name`) and Athena table names take only lowercase letters, digits and
 * underscores (https://docs.aws.amazon.com/athena/latest/ug/tables-databases-columns-names.html): an Inlet
 * name is already lowercase, so only `-` becomes `_`.
 */
export const catalogTableName = (table: string): string => table.toLowerCase().replace(/[^a-z0-9_]/g, '_');

/**
 * A Glue database name from a stack name: lowercase, `_` for anything but letters and digits (Athena's
 * rule for database names, as for tables), at most 255 bytes (Glue API `Database.Name`).
 */
export const catalogDatabaseName = (stackName: string): string =>
  `${stackName.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_bronze`.slice(0, 255);

/**
 * The Hive type string of a Delta type, as Spark writes a Delta table's columns to a Hive metastore or Glue
 * (the Catalyst type's `catalogString`) and as Athena's DDL spells them
 * (https://docs.aws.amazon.com/athena/latest/ug/data-types.html): `long` is `bigint`, `integer` `int`,
 * `short` `smallint`, `byte` `tinyint`. `timestamp_ntz` has no Hive type: it is `timestamp` here, and
 * Athena, which reads the type from the log, returns it without a zone (it supports timestampNtz).
 */
export function hiveType(type: BronzeType): string {
  if (typeof type === 'string') {
    const decimal = decimalOf(type);
    if (decimal) return `decimal(${decimal.precision},${decimal.scale})`;
    return HIVE_PRIMITIVES[type as keyof typeof HIVE_PRIMITIVES] ?? type;
  }
  switch (type.type) {
    case 'struct':
      return `struct<${type.fields.map((f) => `${f.name}:${hiveType(f.type)}`).join(',')}>`;
    case 'array':
      return `array<${hiveType(type.elementType)}>`;
    case 'map':
      return `map<${hiveType(type.keyType)},${hiveType(type.valueType)}>`;
  }
}

const HIVE_PRIMITIVES = {
  string: 'string',
  long: 'bigint',
  integer: 'int',
  short: 'smallint',
  byte: 'tinyint',
  float: 'float',
  double: 'double',
  boolean: 'boolean',
  binary: 'binary',
  date: 'date',
  timestamp: 'timestamp',
  timestamp_ntz: 'timestamp',
} as const;

/**
 * The entry for a bronze table: a native Delta table (`table_type` = `DELTA`, as Athena's
 * `CREATE EXTERNAL TABLE ... TBLPROPERTIES ('table_type'='DELTA')` writes it, and
 * `spark.sql.sources.provider` = `delta` with the location also as the SerDe's `path`, as AWS's page on
 * syncing Delta metadata gives it for Spark and other engines), every column of the log (system columns
 * included) in its order; a partitioned table's partition columns as its `PartitionKeys`, in `partitionBy`
 * order, as Athena writes the entry of a Delta table it creates (AWS's page on syncing Delta metadata: the
 * Glue entry holds the schema and the partition columns).
 */
export function catalogTable(input: {
  readonly table: string;
  /** `s3://bucket/prefix` of the Delta table. */
  readonly location: string;
  readonly schema: TableSchema;
  /** The log version the schema was read at. */
  readonly deltaVersion: number;
  /** The table's `partitionColumns`. @default [] */
  readonly partitionBy?: readonly string[];
}): CatalogTable {
  const partitionBy = input.partitionBy ?? [];
  const columns = tableColumns(input.schema, partitionBy);
  const glue = (c: Column) => ({ Name: c.name, Type: hiveType(c.type) });
  const partitionKeys = partitionBy.map((name) => columns.find((c) => c.name === name));
  return {
    Name: catalogTableName(input.table),
    TableType: 'EXTERNAL_TABLE',
    Parameters: {
      EXTERNAL: 'TRUE',
      table_type: 'DELTA',
      'spark.sql.sources.provider': 'delta',
      [CATALOG_TABLE_PARAMETER]: input.table,
      [CATALOG_VERSION_PARAMETER]: String(input.deltaVersion),
    },
    PartitionKeys: partitionKeys.filter((c) => c !== undefined).map(glue),
    StorageDescriptor: {
      Columns: columns.filter((c) => !partitionBy.includes(c.name)).map(glue),
      Location: input.location,
      SerdeInfo: {
        SerializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
        Parameters: { 'serialization.format': '1', path: input.location },
      },
    },
  };
}

/** What a Glue entry says of itself, read back (any fields may be missing: someone else's table). */
export interface StoredCatalogTable {
  readonly Parameters?: Readonly<Record<string, string>>;
  readonly StorageDescriptor?: {
    readonly Columns?: ReadonlyArray<{ readonly Name?: string; readonly Type?: string }>;
    readonly Location?: string;
  };
}

/** The log version an entry was projected from; -1 when it carries none. */
export function projectedVersion(stored: StoredCatalogTable): number {
  const v = Number(stored.Parameters?.[CATALOG_VERSION_PARAMETER]);
  return Number.isInteger(v) ? v : -1;
}

/**
 * Whether the stored entry already says what `wanted` says: same location, columns (names, types, order)
 * and Delta parameters. The projected version alone is no reason to write: an entry is updated only when
 * the schema or location differs.
 */
export function sameEntry(stored: StoredCatalogTable, wanted: CatalogTable): boolean {
  const sd = stored.StorageDescriptor;
  if (sd?.Location !== wanted.StorageDescriptor.Location) return false;
  const columns = sd.Columns ?? [];
  const want = wanted.StorageDescriptor.Columns;
  if (columns.length !== want.length) return false;
  // Glue may spell a type in another case than it was sent; names are stored lowercase by Glue.
  if (
    columns.some(
      (c, i) =>
        c.Name?.toLowerCase() !== want[i]?.Name.toLowerCase() ||
        c.Type?.toLowerCase() !== want[i]?.Type.toLowerCase(),
    )
  )
    return false;
  const params = stored.Parameters ?? {};
  return Object.entries(wanted.Parameters).every(
    ([k, v]) => k === CATALOG_VERSION_PARAMETER || params[k] === v,
  );
}

/** Two catalogued tables whose Glue names are the same (`a-b` and `a_b`): one entry would hold both. */
export function catalogProblems(
  tables: ReadonlyArray<{ readonly name: string; readonly bronze?: { readonly catalog: boolean } }>,
): string[] {
  const byName = new Map<string, string>();
  const problems: string[] = [];
  for (const { name, bronze } of tables) {
    if (!bronze?.catalog) continue;
    const glue = catalogTableName(name);
    const twin = byName.get(glue);
    if (twin !== undefined)
      problems.push(
        `${name}.bronze.catalog: '${name}' and '${twin}' are both '${glue}' in the Glue catalog; set catalog: false on one`,
      );
    byName.set(glue, name);
  }
  return problems;
}

const DATABASE_NAME = /^[a-z0-9_]{1,255}$/;

/** Why a Glue database name Athena cannot query is refused, or undefined. */
export const catalogDatabaseProblem = (name: string): string | undefined =>
  DATABASE_NAME.test(name)
    ? undefined
    : `bronzeSink.catalogDatabase '${name}': a Glue database Athena queries is 1-255 lowercase letters, digits and _`;

/** How to query a bronze table: Athena through its Glue entry, Spark SQL and delta-rs by its path. */
export interface TableQueries {
  /** Athena (engine 3) or any engine on the Glue catalog; absent when the table is not catalogued. */
  readonly athena?: string;
  /** Spark with Delta Lake (Databricks, EMR, Glue; OSS Spark spells the scheme `s3a://`). */
  readonly sparkSql: string;
  /** delta-rs (Python `deltalake`), DuckDB's `delta_scan` takes the same path. */
  readonly deltaRs: string;
}

export function tableQueries(
  location: string,
  catalog?: { readonly database: string; readonly table: string },
): TableQueries {
  return {
    ...(catalog ? { athena: `SELECT * FROM "${catalog.database}"."${catalog.table}" LIMIT 10` } : {}),
    sparkSql: `SELECT * FROM delta.\`${location}\` LIMIT 10`,
    deltaRs: `DeltaTable("${location}").to_pandas()`,
  };
}

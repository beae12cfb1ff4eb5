import {
  CreateTableCommand,
  GetTableCommand,
  type GlueClient,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { CatalogTable, StoredCatalogTable } from '../catalog.ts';
import type { TableCatalog } from '../catalog-sync.ts';

const named = (error: unknown, ...names: string[]) =>
  names.includes((error as Error | undefined)?.name ?? '');

/**
 * The Glue Data Catalog's GetTable, CreateTable and UpdateTable
 * (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-catalog-tables.html). Glue's "already exists",
 * "not found" and "changed since read" answers are outcomes here, every other error is classified.
 */
export class GlueTableCatalog implements TableCatalog {
  constructor(private readonly client: GlueClient) {}

  async get(database: string, name: string) {
    try {
      const { Table } = await this.client.send(new GetTableCommand({ DatabaseName: database, Name: name }));
      if (!Table) return undefined;
      return { table: Table as StoredCatalogTable, versionId: Table.VersionId };
    } catch (error) {
      if (named(error, 'EntityNotFoundException')) return undefined;
      throw classifyAwsError('glue GetTable', error);
    }
  }

  async create(database: string, table: CatalogTable) {
    try {
      await this.client.send(new CreateTableCommand({ DatabaseName: database, TableInput: input(table) }));
      return 'created' as const;
    } catch (error) {
      // A retried CreateTable whose first attempt was applied lands here too: the caller reads it back.
      if (named(error, 'AlreadyExistsException')) return 'exists' as const;
      throw classifyAwsError('glue CreateTable', error);
    }
  }

  async update(database: string, table: CatalogTable, versionId: string | undefined) {
    try {
      // VersionId: Glue's optimistic lock, as Iceberg's Glue catalog commits with it; the update is refused
      // with ConcurrentModificationException when the table changed since it was read.
      await this.client.send(
        new UpdateTableCommand({ DatabaseName: database, TableInput: input(table), VersionId: versionId }),
      );
      return 'updated' as const;
    } catch (error) {
      if (named(error, 'ConcurrentModificationException', 'EntityNotFoundException'))
        return 'conflict' as const;
      throw classifyAwsError('glue UpdateTable', error);
    }
  }
}

const input = (table: CatalogTable): TableInput => ({
  Name: table.Name,
  TableType: table.TableType,
  Parameters: { ...table.Parameters },
  PartitionKeys: [],
  StorageDescriptor: {
    Columns: table.StorageDescriptor.Columns.map((c) => ({ Name: c.Name, Type: c.Type })),
    Location: table.StorageDescriptor.Location,
    SerdeInfo: {
      SerializationLibrary: table.StorageDescriptor.SerdeInfo.SerializationLibrary,
      Parameters: { ...table.StorageDescriptor.SerdeInfo.Parameters },
    },
  },
});

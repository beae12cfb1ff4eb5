import type { CatalogTable, StoredCatalogTable } from '../../../shared/bronze/catalog.ts';
import type { TableCatalog } from '../../../shared/bronze/catalog-sync.ts';

/**
 * The Glue Data Catalog in memory, as Glue behaves (docs/aws-behaviour.md, bronze "Catalog"): CreateTable of
 * an existing name is AlreadyExists, UpdateTable with a stale VersionId is a ConcurrentModification, every
 * update bumps the VersionId. `failNext` makes the next calls throw (a Glue outage); `beforeUpdate` runs
 * between a reader's GetTable and its UpdateTable (a racing writer).
 */
export class MemoryCatalog implements TableCatalog {
  readonly tables = new Map<string, { table: CatalogTable | StoredCatalogTable; versionId: number }>();
  readonly calls: string[] = [];
  failNext = 0;
  beforeUpdate?: () => void;

  private tick(call: string) {
    this.calls.push(call);
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error(`Glue unavailable (${call})`);
    }
  }

  put(database: string, table: CatalogTable | StoredCatalogTable, name: string) {
    const old = this.tables.get(`${database}.${name}`);
    this.tables.set(`${database}.${name}`, { table, versionId: (old?.versionId ?? 0) + 1 });
  }

  entry(database: string, name: string): CatalogTable | undefined {
    return this.tables.get(`${database}.${name}`)?.table as CatalogTable | undefined;
  }

  async get(database: string, name: string) {
    this.tick(`get ${name}`);
    const found = this.tables.get(`${database}.${name}`);
    return found && { table: found.table, versionId: String(found.versionId) };
  }

  async create(database: string, table: CatalogTable) {
    this.tick(`create ${table.Name}`);
    if (this.tables.has(`${database}.${table.Name}`)) return 'exists' as const;
    this.put(database, table, table.Name);
    return 'created' as const;
  }

  async update(database: string, table: CatalogTable, versionId: string | undefined) {
    this.tick(`update ${table.Name}`);
    this.beforeUpdate?.();
    const found = this.tables.get(`${database}.${table.Name}`);
    if (!found || (versionId !== undefined && String(found.versionId) !== versionId))
      return 'conflict' as const;
    this.put(database, table, table.Name);
    return 'updated' as const;
  }
}

import type { Log } from '../kernel/log.ts';
import {
  CATALOG_TABLE_PARAMETER,
  CATALOG_VERSION_PARAMETER,
  type CatalogTable,
  catalogTable,
  projectedVersion,
  type StoredCatalogTable,
  sameEntry,
} from './catalog.ts';
import type { TableSchema } from './schema.ts';

/** The Glue Data Catalog's tables, as the projection uses them (the adapter: ./aws/glue-table-catalog.ts). */
export interface TableCatalog {
  /** The entry and its Glue `VersionId`, or undefined when the table does not exist. */
  get(
    database: string,
    name: string,
  ): Promise<{ readonly table: StoredCatalogTable; readonly versionId?: string } | undefined>;
  /** `exists`: another writer created it first (Glue's AlreadyExistsException). */
  create(database: string, table: CatalogTable): Promise<'created' | 'exists'>;
  /**
   * Conditional on `versionId` (Glue's optimistic lock: `UpdateTable.VersionId`); `conflict` when the entry
   * changed since it was read (ConcurrentModificationException) or was deleted (EntityNotFoundException).
   */
  update(
    database: string,
    table: CatalogTable,
    versionId: string | undefined,
  ): Promise<'updated' | 'conflict'>;
}

export interface ProjectInput {
  readonly table: string;
  readonly location: string;
  readonly schema: TableSchema;
  /** The log version `schema` was read at. */
  readonly deltaVersion: number;
  /** The table's partition columns. @default [] */
  readonly partitionBy?: readonly string[];
}

/** Reads and writes one run makes before leaving a racing writer's entry to the next run. */
const ATTEMPTS = 3;

/**
 * Keeps each bronze table's Glue entry in step with its Delta log (docs/protocol.md, "Catalog projection"):
 * create if absent, update only when the location or columns differ, never replace an entry projected from
 * a later log version. The Delta commit is the truth and the entry a projection of it: a failure here is
 * logged and reported (`false`), never thrown, so it cannot hold back the table; the sink's cursor records
 * how far the entry is known to be in step, and the next run repairs it.
 *
 * Within a container an entry it wrote (or found in step) is remembered, so a warm sink makes no Glue call
 * until the schema or location changes; a cold one makes one `GetTable` per table it commits to.
 */
export class CatalogProjection {
  /** Table -> the entry (without its version parameter) this container knows Glue holds. */
  private readonly known = new Map<string, string>();

  constructor(
    private readonly deps: { readonly catalog: TableCatalog; readonly database: string; readonly log: Log },
  ) {}

  /** Whether the entry says what the log says at `input.deltaVersion` (or later) once it returns. */
  async project(input: ProjectInput): Promise<boolean> {
    const wanted = catalogTable(input);
    const key = fingerprint(wanted);
    if (this.known.get(input.table) === key) return true;
    const where = { table: input.table, database: this.deps.database, glueTable: wanted.Name };
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const found = await this.deps.catalog.get(this.deps.database, wanted.Name);
        if (!found) {
          if ((await this.deps.catalog.create(this.deps.database, wanted)) === 'exists') continue;
          this.deps.log.info('bronze catalog table created', { ...where, deltaVersion: input.deltaVersion });
          this.known.set(input.table, key);
          return true;
        }
        const owner = found.table.Parameters?.[CATALOG_TABLE_PARAMETER];
        if (owner !== input.table) {
          // Someone else's table (a crawler's, a user's, another Inlet table's): never overwritten.
          this.deps.log.error('bronze catalog table name taken by another table', { ...where, owner });
          return false;
        }
        if (sameEntry(found.table, wanted)) {
          this.known.set(input.table, key);
          return true;
        }
        // A run with a newer log wrote it: this run's view is the older one, and the newer stands.
        if (projectedVersion(found.table) > input.deltaVersion) return true;
        if ((await this.deps.catalog.update(this.deps.database, wanted, found.versionId)) === 'conflict')
          continue;
        this.deps.log.info('bronze catalog table updated', { ...where, deltaVersion: input.deltaVersion });
        this.known.set(input.table, key);
        return true;
      }
      this.deps.log.warn('bronze catalog table kept changing under the sink; the next run retries', where);
      return false;
    } catch (error) {
      this.deps.log.error('bronze catalog update failed; the next run retries', {
        ...where,
        error: String(error),
      });
      return false;
    }
  }
}

/** The entry without its projected version, which alone is no reason to write. */
function fingerprint(table: CatalogTable): string {
  const { [CATALOG_VERSION_PARAMETER]: _, ...parameters } = table.Parameters;
  return JSON.stringify({ ...table, Parameters: parameters });
}

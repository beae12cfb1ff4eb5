import { parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import { type BronzeConfigInput, bronzeConfigSchema } from '../../../shared/bronze/config.ts';
import { parquetRecords } from '../../../shared/bronze/parquet-records.ts';
import type { TableSchema } from '../../../shared/bronze/schema.ts';
import { MemoryDelta, MemorySources, manifestOf, writeVersion } from './memory.ts';

/** One bronze table in memory: write manifest versions of landing files, read back what they became. */
export function memoryTable(config: BronzeConfigInput) {
  const sources = new MemorySources(1 << 20);
  const delta = new MemoryDelta();
  const parsed = bronzeConfigSchema.parse(config);
  let schema: TableSchema | undefined;
  let version = 0;
  /** A manifest version's data files, in name order. */
  const dataFiles = (manifestVersion: number) => {
    const prefix = `part-${String(manifestVersion).padStart(20, '0')}-`;
    return [...delta.files]
      .filter(([path]) => path.startsWith(prefix))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, bytes]) => bytes);
  };
  return {
    sources,
    delta,
    get schema() {
      return schema;
    },
    /** The landing files (key -> content) as the next manifest version. */
    async write(files: Record<string, string | Uint8Array>) {
      for (const [key, body] of Object.entries(files)) sources.objects.set(key, body);
      version += 1;
      const result = await writeVersion(
        { sources, delta },
        {
          table: 't',
          location: 's3://b/p',
          config: parsed,
          manifest: manifestOf('t', version, Object.keys(files)),
          schema,
        },
      );
      schema = result.schema;
      return result;
    },
    /** Rows of one manifest version's data files, as hyparquet reads them. */
    async rows(manifestVersion = version): Promise<Record<string, unknown>[]> {
      const out: Record<string, unknown>[] = [];
      for (const bytes of dataFiles(manifestVersion)) out.push(...(await readRows(bytes)));
      return out;
    },
    /**
     * The stored values of a version's data files, read raw (timestamps as microseconds, decimals unscaled,
     * dates as days): hyparquet's defaults would round them on the way (a Date has milliseconds).
     */
    async cells(manifestVersion = version): Promise<Record<string, unknown>[]> {
      const out: Record<string, unknown>[] = [];
      for (const bytes of dataFiles(manifestVersion)) {
        const file = {
          byteLength: bytes.byteLength,
          slice: async (a: number, b?: number) => bytes.slice(a, b).buffer as ArrayBuffer,
        };
        for await (const r of parquetRecords(file)) if (r.kind === 'row') out.push({ ...r.values });
      }
      return out;
    },
    /** `_rescued_data` of a version's rows, parsed, in row order (null where nothing was rescued). */
    async rescued(manifestVersion = version) {
      return (await this.rows(manifestVersion)).map((r) =>
        typeof r._rescued_data === 'string' ? (JSON.parse(r._rescued_data) as Record<string, unknown>) : null,
      );
    },
    /** The actions of a Delta version's commit. */
    actions(deltaVersion: number) {
      return (delta.commits.get(deltaVersion) ?? '')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);
    },
  };
}

/**
 * A Parquet file's rows as objects. Built with Object.fromEntries, which defines each key as its own
 * property: hyparquet's object rows assign keys, so a column named `__proto__` would set the prototype.
 */
export async function readRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  const names = parquetSchema(metadata).children.map((c) => c.element.name);
  const rows = await new Promise<unknown[][]>((resolve, reject) => {
    parquetRead({ file, metadata, utf8: false, onComplete: (r) => resolve(r as unknown[][]) }).catch(reject);
  });
  return rows.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])));
}

import type { ListedFile, TableFiles } from '../../../shared/bronze/table-files.ts';
import type { MemoryDelta } from './memory.ts';

/** The data files of a MemoryDelta as a TableFiles; `modified` gives each path's LastModified (default 0). */
export function memoryTableFiles(
  delta: MemoryDelta,
  modified: (path: string) => number = () => 0,
): TableFiles & { readonly deleted: string[] } {
  const deleted: string[] = [];
  return {
    deleted,
    async open(path) {
      const bytes = delta.files.get(path);
      if (!bytes) throw new Error(`no data file ${path}`);
      return {
        byteLength: bytes.byteLength,
        slice: async (start: number, end?: number) => bytes.slice(start, end).buffer as ArrayBuffer,
      };
    },
    async *list(): AsyncIterable<ListedFile> {
      for (const [path, bytes] of [...delta.files].sort(([a], [b]) => (a < b ? -1 : 1)))
        yield { path, size: bytes.byteLength, lastModified: modified(path) };
    },
    async delete(paths) {
      for (const p of paths) {
        delta.files.delete(p);
        deleted.push(p);
      }
    },
  };
}

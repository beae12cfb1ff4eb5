/**
 * What the SymlinkManifests port promises, for the unit tests' fake and the S3 adapter alike: the
 * projection's "never older over newer" rests on these answers.
 */
import { describe, expect, it } from 'vitest';
import type { SymlinkManifests } from '../../shared/bronze/ports.ts';

export function symlinkManifestsContract(open: () => Promise<SymlinkManifests>): void {
  describe('SymlinkManifests contract', () => {
    it('a first write only where none is, a replacement only of the object read; each records its version', async () => {
      const links = await open();
      expect(await links.read('')).toBeUndefined();
      expect(await links.write('', 's3://b/t/a.parquet\n', 3, undefined)).toBe('written');
      // Another writer got there first: its manifest is not replaced blind.
      expect(await links.write('', 's3://b/t/b.parquet\n', 4, undefined)).toBe('conflict');
      const first = await links.read('');
      expect(first?.version).toBe(3);
      expect(await links.write('', 's3://b/t/b.parquet\n', 4, first?.etag)).toBe('written');
      const second = await links.read('');
      expect(second?.version).toBe(4);
      expect(second?.etag).not.toBe(first?.etag);
      // Replacing what was read before the last write: a conflict, nothing changed.
      expect(await links.write('', 's3://b/t/c.parquet\n', 5, first?.etag)).toBe('conflict');
      expect((await links.read(''))?.version).toBe(4);
    });

    it("each partition directory's manifest is its own object", async () => {
      const links = await open();
      expect(await links.write('region=eu/', 'x\n', 1, undefined)).toBe('written');
      expect(await links.read('region=us/')).toBeUndefined();
      expect(await links.write('region=us/', 'y\n', 2, undefined)).toBe('written');
      expect((await links.read('region=eu/'))?.version).toBe(1);
    });
  });
}

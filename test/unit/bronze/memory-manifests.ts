import type { SymlinkManifests } from '../../../shared/bronze/ports.ts';

/**
 * Manifests in memory, as S3's conditional writes behave: a write names the ETag it read (or none: the key
 * must be absent) and is a conflict otherwise. `failNext` throws (an S3 outage); `beforeWrite` runs between a
 * projection's read and its write (a racing writer).
 */
export class MemoryManifests implements SymlinkManifests {
  readonly objects = new Map<string, { body: string; version: number; etag: string }>();
  readonly writes: string[] = [];
  failNext = 0;
  beforeWrite?: () => void;
  private etags = 0;

  async read(dir: string) {
    const found = this.objects.get(dir);
    return found && { version: found.version, etag: found.etag };
  }

  async write(dir: string, body: string, version: number, etag: string | undefined) {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('S3 unavailable');
    }
    const hook = this.beforeWrite;
    this.beforeWrite = undefined;
    hook?.();
    if (this.objects.get(dir)?.etag !== etag) return 'conflict' as const;
    this.etags += 1;
    this.objects.set(dir, { body, version, etag: `"e${this.etags}"` });
    this.writes.push(dir);
    return 'written' as const;
  }

  lines(dir: string): string[] {
    return (this.objects.get(dir)?.body ?? '').split('\n').filter((l) => l !== '');
  }
}

import { type Backoff, backoffDelay } from '../kernel/backoff.ts';
import type { Clock } from '../kernel/clock.ts';
import { InletError, isThrottle, ManifestConflictError, UnknownOutcomeError } from '../kernel/errors.ts';
import type { Log } from '../kernel/log.ts';
import type { PutIfAbsentResult } from '../kernel/put-if-absent.ts';
import type { BatchStore } from './batch-store.ts';
import type { Manifest } from './manifest.ts';
import { retryRead } from './retry-read.ts';

/** Manifest puts answered 409 (a conditional write in flight) or 412 with nothing readable yet. */
const MANIFEST_PUT_ATTEMPTS = 5;
/** Full jitter, so two committers that collided do not collide again. */
const PUT_BACKOFF: Backoff = { base: 50, cap: 2_000, jitter: 'full' };

export const sameIds = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * C3 (docs/protocol.md). `If-None-Match: *`. 409 means a conditional write to the key is in flight (ours
 * from an earlier attempt, or a racing committer's): try again. 412, or a put whose outcome is unknown,
 * means read it: ours, go on; another batch's, a fork; nothing readable yet, put again.
 */
export async function writeManifest(
  deps: Clock & { readonly store: BatchStore; readonly log: Log },
  manifest: Manifest,
  batchIds: readonly string[],
  deadline: number | undefined,
): Promise<void> {
  const { store, log } = deps;
  for (let attempt = 1; attempt <= MANIFEST_PUT_ATTEMPTS; attempt++) {
    let put: PutIfAbsentResult;
    try {
      put = await store.putManifestIfAbsent(manifest);
    } catch (error) {
      // S3 SlowDown applied nothing (classified so only when no attempt may have): put again shortly.
      if (isThrottle(error) && !(error instanceof UnknownOutcomeError)) put = 'conflict';
      else if (error instanceof UnknownOutcomeError) put = 'exists';
      else throw error;
    }
    if (put === 'created') return;
    if (put === 'exists') {
      const existing = await retryRead(deps, deadline, () =>
        store.getManifest(manifest.table, manifest.version),
      );
      if (existing) {
        const found = existing.batchIds;
        if (sameIds(found, batchIds)) return;
        log.error('manifest fork refused', {
          table: manifest.table,
          version: manifest.version,
          batchIds,
          found,
        });
        throw new ManifestConflictError(manifest.table, manifest.version, batchIds.join(','), [...found]);
      }
    }
    await deps.sleep(backoffDelay(PUT_BACKOFF, attempt, deps.random));
  }
  throw new InletError(
    `manifest ${manifest.table} v${manifest.version}: conditional put kept conflicting; retried later`,
    { retryable: true },
  );
}

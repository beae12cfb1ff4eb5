import { type Backoff, backoffDelay } from '../kernel/backoff.ts';
import type { Clock } from '../kernel/clock.ts';
import { InletError, isThrottle, UnknownOutcomeError } from '../kernel/errors.ts';
import type { DeltaStore } from './ports.ts';

/**
 * Puts of one version that settled nothing (409: a conditional write to the key in flight; SlowDown; an
 * outcome the SDK could not tell with nothing there after) before the run gives up and is retried.
 */
const PUT_ATTEMPTS = 6;
/** Full jitter, so two writers that collided do not collide again (as the manifest put does). */
const PUT_BACKOFF: Backoff = { base: 50, cap: 2_000, jitter: 'full' };

/**
 * What one conditional put of log entry `version` settled, for a writer's optimistic loop (the sink's commit,
 * optimize's): `created` (ours); `taken` with the text there (read it: it may be our own bytes from an
 * attempt whose answer was lost, or another commit); `again` when nothing settled (409, SlowDown, or an
 * unknown outcome with nothing there), after a jittered backoff, at most PUT_ATTEMPTS times a loop.
 */
export class LogPut {
  private unsettled = 0;

  constructor(
    private readonly deps: Pick<Clock, 'sleep' | 'random'> & { readonly delta: DeltaStore },
    private readonly what: string,
  ) {}

  async put(
    version: number,
    body: string,
  ): Promise<{ kind: 'created' } | { kind: 'taken'; text: string } | { kind: 'again' }> {
    let put: 'created' | 'exists' | 'conflict' | 'unknown';
    try {
      put = await this.deps.delta.putCommitIfAbsent(version, body);
    } catch (error) {
      if (error instanceof UnknownOutcomeError) put = 'unknown';
      // SlowDown applied nothing (classified so only when no attempt may have): put again shortly.
      else if (isThrottle(error)) put = 'conflict';
      else throw error;
    }
    if (put === 'created') return { kind: 'created' };
    if (put !== 'conflict') {
      const text = await this.deps.delta.getCommit(version);
      // Not there: the unknown put was not applied (the SDK's attempts are over); put again.
      if (text !== undefined) return { kind: 'taken', text };
    }
    this.unsettled += 1;
    if (this.unsettled >= PUT_ATTEMPTS)
      throw new InletError(`${this.what}: the commit of Delta version ${version} kept conflicting`, {
        retryable: true,
      });
    await this.deps.sleep(backoffDelay(PUT_BACKOFF, this.unsettled, this.deps.random));
    return { kind: 'again' };
  }
}

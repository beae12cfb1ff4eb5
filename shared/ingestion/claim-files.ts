import { type Backoff, backOff } from '../kernel/backoff.ts';
import type { Clock } from '../kernel/clock.ts';
import { DefiniteFailureError, ThrottledError, UnknownOutcomeError } from '../kernel/errors.ts';
import type { Log } from '../kernel/log.ts';
import type { FenceResult, Ledger } from './ledger.ts';
import { BATCH_STATE, type BatchRecord, type FileOwner, type FileRef } from './model.ts';

/**
 * How one file's claim ended. `unknown`: a write that may name our batch has no known outcome, so the batch
 * must not seal (its staged list could miss the file). `throttled`, `busy`, `failed`: the file is not ours
 * and nothing says otherwise; only its message fails.
 */
export type ClaimOutcome = 'claimed' | 'duplicate' | 'busy' | 'throttled' | 'failed' | 'unknown';

export interface ClaimStats {
  claimed: number;
  duplicates: number;
  takeovers: number;
  busy: number;
  throttled: number;
  failedClaims: number;
}

export type Settled<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly error: unknown;
      readonly possiblyApplied: boolean;
      readonly throttled: boolean;
    };

const SETTLE_ATTEMPTS = 6;
/** 50 ms, 100 ms ... at most 2 s before each re-issue (full jitter). */
const SETTLE_BACKOFF: Backoff = { base: 50, cap: 2_000, jitter: 'full' };
const MAX_TAKEOVER_ROUNDS = 3;

/**
 * Calls a port until it answers. A conditional write with an unknown outcome is re-issued: its answer (done,
 * or the condition failed with the item as it is, ALL_OLD) says whether an earlier attempt was applied,
 * and once the item exists no late attempt can apply any more. Throttles are retried with jittered
 * backoff. Gives up at `deadline`, saying whether any attempt may have been applied.
 */
export async function untilAnswered<T>(
  clock: Clock,
  deadline: number,
  call: () => Promise<T>,
): Promise<Settled<T>> {
  let possiblyApplied = false;
  let last: unknown;
  let throttled = false;
  for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
    try {
      return { ok: true, value: await call() };
    } catch (error) {
      last = error;
      throttled = error instanceof ThrottledError;
      if (error instanceof UnknownOutcomeError) possiblyApplied = true;
      else if (!(error instanceof DefiniteFailureError)) {
        // Not an AWS answer at all (a bug, a crash): nothing says the write did not happen.
        return { ok: false, error, possiblyApplied: true, throttled: false };
      } else if (!throttled) return { ok: false, error, possiblyApplied, throttled };
    }
    if (!(await backOff(clock, SETTLE_BACKOFF, attempt, deadline))) break;
  }
  return { ok: false, error: last, possiblyApplied, throttled };
}

export interface ClaimContext {
  readonly batchId: string;
  readonly leaseUntil: number;
  /** No new claim is started after this; writes in progress stop retrying at it. */
  readonly deadline: number;
  readonly stats: ClaimStats;
  /** SEALED batches some of our files turned out to belong to: their commit is requested again. */
  readonly resendCommits: Map<string, { table: string; batchId: string }>;
}

/**
 * Step B2 for one file (docs/protocol.md): the conditional put, and when another batch owns the file,
 * what that owner's state means: a duplicate, busy, or a fenced takeover. One consistent read per distinct
 * owner and one fence per dead owner per invocation (cached).
 */
export class FileClaimer {
  private readonly batches = new Map<string, Promise<Settled<BatchRecord | undefined>>>();
  private readonly fences = new Map<string, Promise<Settled<FenceResult>>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly log: Log,
    private readonly clock: Clock,
  ) {}

  /** The outcome, and for a busy file when its owner's lease ends (epoch ms). */
  async claim(file: FileRef, ctx: ClaimContext): Promise<{ outcome: ClaimOutcome; busyUntil?: number }> {
    let busyUntil: number | undefined;
    const outcome = await this.claimOnce(file, ctx, (until) => {
      busyUntil = until;
    });
    return busyUntil === undefined ? { outcome } : { outcome, busyUntil };
  }

  private async claimOnce(
    file: FileRef,
    ctx: ClaimContext,
    busy: (until: number) => void,
  ): Promise<ClaimOutcome> {
    const claimed = await untilAnswered(this.clock, ctx.deadline, () =>
      this.ledger.claimFile(file, ctx.batchId, ctx.leaseUntil),
    );
    if (!claimed.ok) return this.unsettled(file, ctx, claimed, 'claim');
    if (claimed.value.kind === 'claimed') return this.ours(ctx);
    let owner: FileOwner = claimed.value.owner;
    for (let round = 0; round < MAX_TAKEOVER_ROUNDS; round++) {
      // An earlier attempt of our own put (or move) was applied.
      if (owner.batchId === ctx.batchId) return this.ours(ctx);
      const key = `${file.table}#${owner.batchId}`;
      const read = await this.cached(
        this.batches,
        key,
        () => this.ledger.getBatch(file.table, owner.batchId),
        ctx,
      );
      if (!read.ok) return this.unsettled(file, ctx, { ...read, possiblyApplied: false }, 'read owner');
      let batch = read.value;
      if (!batch && owner.leaseUntil > this.clock.now()) {
        ctx.stats.busy += 1;
        busy(owner.leaseUntil);
        return 'busy';
      }
      if (!batch) {
        // Died before sealing and its lease ran out: fence it first, once for all its files.
        const fence = await this.cached(
          this.fences,
          key,
          () => this.ledger.fenceBatch(file.table, owner.batchId, ctx.batchId),
          ctx,
        );
        // Whether or not a fence was applied, no file became ours: only this file's message fails.
        if (!fence.ok) return this.unsettled(file, ctx, { ...fence, possiblyApplied: false }, 'fence');
        if (fence.value.kind === 'batch-live') batch = fence.value.batch;
      }
      if (batch && batch.state !== BATCH_STATE.aborted) {
        ctx.stats.duplicates += 1;
        if (batch.state === BATCH_STATE.sealed)
          ctx.resendCommits.set(key, { table: file.table, batchId: batch.batchId });
        return 'duplicate';
      }
      // The owner is ABORTED (for ever): move the file to our batch.
      const from = owner.batchId;
      const moved = await untilAnswered(this.clock, ctx.deadline, () =>
        this.ledger.moveFile(file, from, ctx.batchId, ctx.leaseUntil),
      );
      if (!moved.ok) return this.unsettled(file, ctx, moved, 'take over');
      if (moved.value.kind === 'moved' || moved.value.owner.batchId === ctx.batchId) {
        ctx.stats.takeovers += 1;
        this.log.info('claim taken over', {
          table: file.table,
          identity: file.identity,
          from,
          to: ctx.batchId,
        });
        return this.ours(ctx);
      }
      // Another batcher moved it first: judge its new owner.
      owner = moved.value.owner;
    }
    ctx.stats.busy += 1;
    return 'busy';
  }

  private ours(ctx: ClaimContext): ClaimOutcome {
    ctx.stats.claimed += 1;
    return 'claimed';
  }

  private cached<T>(
    cache: Map<string, Promise<Settled<T>>>,
    key: string,
    call: () => Promise<T>,
    ctx: ClaimContext,
  ): Promise<Settled<T>> {
    let entry = cache.get(key);
    if (!entry) {
      entry = untilAnswered(this.clock, ctx.deadline, call);
      cache.set(key, entry);
      // A failure is not remembered: the next file of the same owner asks again.
      void entry.then((result) => {
        if (!result.ok && cache.get(key) === entry) cache.delete(key);
      });
    }
    return entry;
  }

  private unsettled(
    file: FileRef,
    ctx: ClaimContext,
    result: Settled<unknown> & { ok: false },
    step: string,
  ) {
    const outcome: ClaimOutcome = result.possiblyApplied
      ? 'unknown'
      : result.throttled
        ? 'throttled'
        : 'failed';
    if (outcome === 'throttled') ctx.stats.throttled += 1;
    else ctx.stats.failedClaims += 1;
    this.log.warn(`${step} failed`, {
      table: file.table,
      identity: file.identity,
      outcome,
      error: String(result.error),
    });
    return outcome;
  }
}

import pLimit from 'p-limit';
import { ulid } from 'ulid';
import type { PipelineConfig } from '../config/pipeline-config.ts';
import { type Backoff, backoffDelay } from '../kernel/backoff.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Log } from '../kernel/log.ts';
import type { BatchStore, CommitQueue } from './batch-store.ts';
import {
  type ClaimContext,
  type ClaimOutcome,
  type ClaimStats,
  FileClaimer,
  untilAnswered,
} from './claim-files.ts';
import type { Ledger } from './ledger.ts';
import { canonicalFiles } from './manifest.ts';
import type { FileRef } from './model.ts';
import { parseMessage } from './parse-message.ts';
import { quarantineRecords } from './quarantine.ts';
import { Router } from './routing.ts';

export interface IngestDeps extends Clock {
  readonly config: PipelineConfig;
  readonly ledger: Ledger;
  readonly store: BatchStore;
  readonly commitQueue: CommitQueue;
  readonly log: Log;
  readonly newBatchId?: () => string;
}

export interface HandleOptions {
  /**
   * epoch ms by which the invocation must have returned (Lambda: now + remaining time). Claims stop early
   * enough to stage, seal and request the commit before it.
   */
  readonly deadline?: number;
}

export interface IncomingMessage {
  readonly messageId: string;
  readonly body: string;
  /** ISO-8601, SQS SentTimestamp: stable across redeliveries. */
  readonly sentAt: string;
  /** SQS ApproximateReceiveCount: throttled messages back off longer each time. @default 1 */
  readonly receiveCount?: number;
}

export interface SealedBatchSummary {
  readonly table: string;
  readonly batchId: string;
  readonly files: number;
  readonly bytes: number;
}

export interface IngestResult {
  /** Messages SQS must deliver again (Lambda `batchItemFailures`). */
  readonly failedMessageIds: string[];
  /**
   * Failed messages worth delivering again sooner (or later) than the queue's visibility timeout, in seconds:
   * throttled ones back off, busy ones wait for the owner's lease, fenced ones come back at once. Messages not
   * here keep the queue's timeout (an unsettled claim's lease must run out first).
   */
  readonly retryAfterSeconds: Map<string, number>;
  readonly stats: ClaimStats & {
    fenced: number;
    quarantined: number;
    ignored: number;
    skipped: number;
    /** Files not attempted because half the lease had passed: their messages come back (see claimDeadline). */
    deferred: number;
  };
  readonly sealed: SealedBatchSummary[];
}

interface PendingClaim {
  readonly file: FileRef;
  readonly messageIds: Set<string>;
  outcome?: ClaimOutcome;
  /** For a busy claim: when the owner's lease ends. */
  retryAt?: number;
  /** Not attempted: the claim deadline had passed. */
  deferred?: boolean;
}

/**
 * Time kept for staging, sealing and requesting the commit after the last claim (Lambda deadline), at most
 * half of what the invocation has: the whole of it from a function with a timeout of 10 s or less would defer
 * every claim, and no file would ever be ingested.
 */
const SEAL_MARGIN_MS = 10_000;
/** Throttled messages come back after 5 s, 10 s, 20 s ... at most 15 minutes (jittered). */
const THROTTLE_BACKOFF: Backoff = { base: 5, cap: 900, jitter: 'upper-half' };
/**
 * Deferred or fenced messages come back after 1 s, 2 s, 4 s ... (jittered): soon, since nothing holds their
 * files, but never at once every time, or a fault that keeps recurring (S3 refusing the staged list, a batch
 * always too big) would spend the message's receives in seconds and dead-letter it.
 */
const RETRY_BACKOFF: Backoff = { base: 1, cap: 900, jitter: 'upper-half' };

/** What one invocation knows while it runs: who failed, why, and what to re-send. */
class Invocation {
  readonly failed = new Set<string>();
  /** messageId -> seconds; 'keep' when one of its files needs the queue's own timeout. */
  readonly delays = new Map<string, number | 'keep'>();
  readonly resendCommits = new Map<string, { table: string; batchId: string }>();
  readonly sealed: SealedBatchSummary[] = [];
  readonly stats: IngestResult['stats'] = {
    claimed: 0,
    duplicates: 0,
    takeovers: 0,
    busy: 0,
    throttled: 0,
    failedClaims: 0,
    fenced: 0,
    quarantined: 0,
    ignored: 0,
    skipped: 0,
    deferred: 0,
  };

  constructor(readonly messages: readonly IncomingMessage[]) {}

  /** Fails the messages of these claims; `delay` says when each may come back (see retryAfterSeconds). */
  fail(claims: readonly PendingClaim[], delay: (claim: PendingClaim, messageId: string) => number | 'keep') {
    for (const claim of claims) for (const id of claim.messageIds) this.failMessage(id, delay(claim, id));
  }

  failMessage(id: string, delay: number | 'keep') {
    this.failed.add(id);
    const current = this.delays.get(id);
    this.delays.set(id, current === 'keep' || delay === 'keep' ? 'keep' : Math.max(current ?? 0, delay));
  }
}

/**
 * The batcher (docs/protocol.md, B1-B6): parse and route, claim every file with one conditional write,
 * stage the claimed list, seal, request the commit. Every message either succeeds because each of its
 * files is in a sealed batch (ours or an earlier one), or fails so SQS delivers it again.
 */
export class IngestBatch {
  private readonly router: Router;

  constructor(private readonly deps: IngestDeps) {
    this.router = new Router(deps.config);
  }

  async handle(messages: readonly IncomingMessage[], options: HandleOptions = {}): Promise<IngestResult> {
    const run = new Invocation(messages);
    const claims = await this.parseAndRoute(run);
    const byTable = groupBy([...claims.values()], (claim) => claim.file.table);
    const batchIds = new Map([...byTable.keys()].map((table) => [table, (this.deps.newBatchId ?? ulid)()]));
    const startedAt = this.deps.now();
    const leaseUntil = startedAt + this.deps.config.leaseSeconds * 1000;
    // A batch still claiming when its first claims' leases run out is fenced by the takeovers of its own
    // redelivered messages, and one that is always too big never seals (livelock): claims not started by
    // half the lease, or too close to the Lambda's own end to still seal, are deferred (their messages come
    // back at once).
    const halfLease = startedAt + (this.deps.config.leaseSeconds * 1000) / 2;
    const lambdaDeadline = options.deadline ?? Number.POSITIVE_INFINITY;
    const margin = Math.min(SEAL_MARGIN_MS, (lambdaDeadline - startedAt) / 2);
    const deadline = Math.min(halfLease, lambdaDeadline - margin);

    await this.claimAll(run, claims, (table) => ({
      batchId: batchIds.get(table) as string,
      leaseUntil,
      deadline,
      stats: run.stats,
      resendCommits: run.resendCommits,
    }));
    for (const [table, tableClaims] of byTable)
      await this.sealTable(run, table, batchIds.get(table) as string, tableClaims, deadline);
    await this.resendCommits(run);

    const retryAfterSeconds = new Map<string, number>();
    for (const [id, delay] of run.delays) if (delay !== 'keep') retryAfterSeconds.set(id, Math.ceil(delay));
    return {
      failedMessageIds: messages.map((m) => m.messageId).filter((id) => run.failed.has(id)),
      retryAfterSeconds,
      stats: run.stats,
      sealed: run.sealed,
    };
  }

  /** B1. Parse and route; one claim per (table, identity) however many messages name the file. */
  private async parseAndRoute(run: Invocation): Promise<Map<string, PendingClaim>> {
    const { log } = this.deps;
    const claims = new Map<string, PendingClaim>();
    for (const message of run.messages) {
      const parsed = parseMessage(message.body);
      for (const reason of parsed.ignored)
        log.info('ignored event', { messageId: message.messageId, reason });
      run.stats.ignored += parsed.ignored.length;
      const unroutable: { index: number; reason: string; record: unknown; name: string }[] = [];
      const routedObjects = parsed.objects.flatMap((object) => {
        const routed = this.router.route(object);
        if (routed.kind === 'routed') return [routed.files];
        if (routed.kind === 'unroutable')
          unroutable.push({
            index: 0,
            reason: routed.reason,
            record: object,
            name: `${object.target}:${object.key}`,
          });
        else {
          run.stats.skipped += 1;
          log.info('file skipped', { bucket: object.bucket, key: object.key, reason: routed.reason });
        }
        return [];
      });
      const bad = [...parsed.malformed, ...unroutable];
      if (bad.length > 0) {
        const ok = await quarantineRecords(this.deps.ledger, log, message, bad);
        if (ok) run.stats.quarantined += bad.length;
        else run.failMessage(message.messageId, 'keep');
      }
      for (const files of routedObjects) {
        for (const file of files) {
          const id = `${file.table}#${file.identity}`;
          const existing = claims.get(id);
          // The same file twice in one batch (a duplicate S3 event): one claim serves both messages.
          if (existing && !existing.messageIds.has(message.messageId)) run.stats.duplicates += 1;
          const claim = existing ?? { file, messageIds: new Set<string>() };
          claim.messageIds.add(message.messageId);
          claims.set(id, claim);
        }
      }
    }
    return claims;
  }

  /** B2. Claim, bounded concurrency; claims not started by the deadline are deferred. */
  private async claimAll(
    run: Invocation,
    claims: Map<string, PendingClaim>,
    contextOf: (table: string) => ClaimContext,
  ): Promise<void> {
    const claimer = new FileClaimer(this.deps.ledger, this.deps.log, this.deps);
    const limit = pLimit(this.deps.config.claimConcurrency);
    await Promise.all(
      [...claims.values()].map((claim) =>
        limit(async () => {
          const ctx = contextOf(claim.file.table);
          if (this.deps.now() > ctx.deadline) {
            run.stats.deferred += 1;
            claim.outcome = 'busy';
            claim.deferred = true;
            return;
          }
          const result = await claimer.claim(claim.file, ctx);
          claim.outcome = result.outcome;
          claim.retryAt = result.busyUntil;
        }),
      ),
    );
  }

  /** B3 stage the list, B4 seal, B5 request the commit, for one table's batch. */
  private async sealTable(
    run: Invocation,
    table: string,
    batchId: string,
    tableClaims: readonly PendingClaim[],
    deadline: number,
  ): Promise<void> {
    const { log, ledger } = this.deps;
    const mine = tableClaims.filter((c) => c.outcome === 'claimed');
    run.fail(
      tableClaims.filter((c) => c.outcome === 'busy' || c.outcome === 'throttled' || c.outcome === 'failed'),
      (claim, messageId) => this.retryDelay(claim, messageId, run),
    );
    if (tableClaims.some((c) => c.outcome === 'unknown')) {
      // A claim may name B that we cannot list: B must never seal. Fence it ourselves so that its files are
      // taken over on redelivery at once, instead of after the lease.
      log.warn('claim outcome unknown: batch left unsealed and fenced', { table, batchId });
      const fenced = await this.fenceOwn(table, batchId, deadline);
      run.fail(tableClaims, (_, id) => (fenced ? this.backoff(id, run, RETRY_BACKOFF) : 'keep'));
      return;
    }
    if (mine.length === 0) return;
    try {
      const files = canonicalFiles(mine.map((c) => c.file));
      const bytes = files.reduce((sum, f) => sum + f.size, 0);
      const stagedKey = await this.deps.store.putStagedList({ table, batchId, files });
      const request = {
        table,
        batchId,
        fileCount: files.length,
        bytes,
        stagedKey,
        sealedAt: this.deps.now(),
        minEventTime: files.map((f) => f.eventTime).sort()[0] ?? '',
      };
      // Re-issued when its outcome is unknown: the answer (or ALL_OLD) says SEALED or fenced.
      const seal = await untilAnswered(this.deps, Number.POSITIVE_INFINITY, () => ledger.sealBatch(request));
      if (!seal.ok) throw seal.error;
      if (seal.value.kind === 'fenced') {
        run.stats.fenced += 1;
        log.warn('batch fenced by a takeover before it sealed; its records will be retried', {
          table,
          batchId,
        });
        run.fail(mine, (_, id) => this.backoff(id, run, RETRY_BACKOFF));
        return;
      }
      run.sealed.push({ table, batchId, files: files.length, bytes });
    } catch (error) {
      // Before the seal: fence B so its claims are taken over at once. After it: the retry finds the batch
      // SEALED and re-sends the commit request; the sweeper does too.
      log.error('sealing batch failed', { table, batchId, error: String(error) });
      const fenced = await this.fenceOwn(table, batchId, deadline);
      run.fail(mine, (_, id) => (fenced ? this.backoff(id, run, THROTTLE_BACKOFF) : 'keep'));
      return;
    }
    try {
      await this.deps.commitQueue.requestCommit(table, batchId);
      run.resendCommits.delete(`${table}#${batchId}`);
    } catch (error) {
      // Sealed: the files are safe. Their redelivery re-sends the request soon (and the sweeper would).
      log.warn('commit request failed after the seal; redelivery re-sends it', {
        table,
        batchId,
        error: String(error),
      });
      run.fail(mine, () => 1);
    }
  }

  /** Marks our own batch ABORTED unless it sealed after all. True when its claims are free to take over. */
  private async fenceOwn(table: string, batchId: string, deadline: number): Promise<boolean> {
    const fence = await untilAnswered(
      this.deps,
      Math.max(deadline, this.deps.now() + SEAL_MARGIN_MS / 2),
      () => this.deps.ledger.fenceBatch(table, batchId, batchId),
    );
    return fence.ok && fence.value.kind === 'fenced';
  }

  /** B6'. Duplicates of batches sealed earlier: make sure their commit was requested (idempotent). */
  private async resendCommits(run: Invocation): Promise<void> {
    for (const { table, batchId } of run.resendCommits.values()) {
      try {
        await this.deps.commitQueue.requestCommit(table, batchId);
      } catch (error) {
        this.deps.log.warn('re-sending a commit request failed; the sweeper will', {
          table,
          batchId,
          error: String(error),
        });
      }
    }
  }

  /** When a failed message should come back (seconds), by why its file failed. */
  private retryDelay(claim: PendingClaim, messageId: string, run: Invocation): number | 'keep' {
    const now = this.deps.now();
    if (claim.deferred) return this.backoff(messageId, run, RETRY_BACKOFF);
    if (claim.outcome === 'busy') return Math.max(0, ((claim.retryAt ?? now) - now) / 1000) + 1;
    if (claim.outcome === 'throttled') return this.backoff(messageId, run, THROTTLE_BACKOFF);
    return 'keep';
  }

  /** Exponential in the message's receive count (seconds). */
  private backoff(messageId: string, run: Invocation, policy: Backoff) {
    const receives = run.messages.find((m) => m.messageId === messageId)?.receiveCount ?? 1;
    return backoffDelay(policy, receives - 1, this.deps.random);
  }
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key) ?? [];
    list.push(item);
    groups.set(key, list);
  }
  return groups;
}

import pLimit from 'p-limit';
import { ulid } from 'ulid';
import type { PipelineConfig } from '../config.ts';
import { InletError, UnknownOutcomeError } from '../errors.ts';
import { parseMessage } from '../events/parse-message.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Log } from '../log.ts';
import { canonicalFiles } from '../manifest.ts';
import type { BatchRecord, FileRef } from '../model.ts';
import { Router } from '../routing.ts';
import type { BatchStore, CommitQueue } from '../storage/batch-store.ts';
import { quarantineRecords } from './quarantine.ts';

export interface IngestDeps {
  readonly config: PipelineConfig;
  readonly ledger: Ledger;
  readonly store: BatchStore;
  readonly commitQueue: CommitQueue;
  readonly log: Log;
  /** epoch ms */
  readonly now: () => number;
  readonly newBatchId?: () => string;
}

export interface IncomingMessage {
  readonly messageId: string;
  readonly body: string;
  /** ISO-8601, SQS SentTimestamp: stable across redeliveries. */
  readonly sentAt: string;
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
  readonly stats: {
    claimed: number;
    duplicates: number;
    takeovers: number;
    busy: number;
    failedClaims: number;
    fenced: number;
    quarantined: number;
    ignored: number;
    skipped: number;
    /** Files not attempted because half the lease had passed: their messages come back (see claimDeadline). */
    deferred: number;
  };
  readonly sealed: SealedBatchSummary[];
}

type Outcome = 'claimed' | 'duplicate' | 'busy' | 'failed' | 'unknown';

interface PendingClaim {
  readonly file: FileRef;
  readonly messageIds: Set<string>;
  outcome?: Outcome;
}

const MAX_TAKEOVER_ROUNDS = 3;

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

  async handle(messages: readonly IncomingMessage[]): Promise<IngestResult> {
    const { log } = this.deps;
    const failed = new Set<string>();
    const stats: IngestResult['stats'] = {
      claimed: 0,
      duplicates: 0,
      takeovers: 0,
      busy: 0,
      failedClaims: 0,
      fenced: 0,
      quarantined: 0,
      ignored: 0,
      skipped: 0,
      deferred: 0,
    };

    // B1. Parse and route; one claim per (table, identity) however many messages name the file.
    const claims = new Map<string, PendingClaim>();
    for (const message of messages) {
      const parsed = parseMessage(message.body);
      for (const reason of parsed.ignored)
        log.info('ignored event', { messageId: message.messageId, reason });
      stats.ignored += parsed.ignored.length;
      if (parsed.malformed.length > 0) {
        const ok = await quarantineRecords(this.deps.ledger, log, message, parsed.malformed);
        if (ok) stats.quarantined += parsed.malformed.length;
        else failed.add(message.messageId);
      }
      for (const object of parsed.objects) {
        const routed = this.router.route(object);
        if (routed.kind === 'skipped') {
          stats.skipped += 1;
          log.info('file skipped', { bucket: object.bucket, key: object.key, reason: routed.reason });
          continue;
        }
        for (const file of routed.files) {
          const id = `${file.table}#${file.identity}`;
          const existing = claims.get(id);
          // The same file twice in one batch (a duplicate S3 event): one claim serves both messages.
          if (existing && !existing.messageIds.has(message.messageId)) stats.duplicates += 1;
          const claim = existing ?? { file, messageIds: new Set<string>() };
          claim.messageIds.add(message.messageId);
          claims.set(id, claim);
        }
      }
    }

    // One batch per table in this invocation.
    const byTable = new Map<string, PendingClaim[]>();
    for (const claim of claims.values()) {
      const list = byTable.get(claim.file.table) ?? [];
      list.push(claim);
      byTable.set(claim.file.table, list);
    }
    const batchIds = new Map([...byTable.keys()].map((table) => [table, (this.deps.newBatchId ?? ulid)()]));
    const startedAt = this.deps.now();
    const leaseUntil = startedAt + this.deps.config.leaseSeconds * 1000;
    // A batch that is still claiming when its first claims' leases run out gets fenced by the takeovers of
    // its own redelivered messages, and a batch that is always too big never seals (livelock). So claims not
    // started by half the lease are deferred: their messages fail and return; the rest seals in time.
    // Lambda's timeout (< lease) usually ends the invocation first; dense messages (a backfill packs
    // several files into one) and a slow ledger are where this matters.
    const claimDeadline = startedAt + (this.deps.config.leaseSeconds * 1000) / 2;
    const batchCache = new Map<string, Promise<BatchRecord | undefined>>();
    const resendCommits = new Map<string, { table: string; batchId: string }>();

    // B2. Claim, bounded concurrency.
    const limit = pLimit(this.deps.config.claimConcurrency);
    await Promise.all(
      [...claims.values()].map((claim) =>
        limit(async () => {
          if (this.deps.now() > claimDeadline) {
            stats.deferred += 1;
            claim.outcome = 'busy';
            return;
          }
          const batchId = batchIds.get(claim.file.table) as string;
          claim.outcome = await this.claim(claim.file, batchId, leaseUntil, batchCache, resendCommits, stats);
        }),
      ),
    );

    const sealed: SealedBatchSummary[] = [];
    for (const [table, tableClaims] of byTable) {
      const batchId = batchIds.get(table) as string;
      const mine = tableClaims.filter((c) => c.outcome === 'claimed');
      const failMessages = (list: readonly PendingClaim[]) => {
        for (const c of list) for (const id of c.messageIds) failed.add(id);
      };
      failMessages(tableClaims.filter((c) => c.outcome === 'busy' || c.outcome === 'failed'));

      if (tableClaims.some((c) => c.outcome === 'unknown')) {
        // A claim may exist that we cannot list: never seal. Our claims expire and are taken over on retry.
        log.warn('claim outcome unknown: batch left unsealed', { table, batchId });
        failMessages(tableClaims);
        continue;
      }
      if (mine.length === 0) continue;
      try {
        // B3. Stage the list; B4. seal; B5. request the commit.
        const files = canonicalFiles(mine.map((c) => c.file));
        const bytes = files.reduce((sum, f) => sum + f.size, 0);
        const stagedKey = await this.deps.store.putStagedList({ table, batchId, files });
        const seal = await this.deps.ledger.sealBatch({
          table,
          batchId,
          fileCount: files.length,
          bytes,
          stagedKey,
          sealedAt: this.deps.now(),
          minEventTime: files.map((f) => f.eventTime).sort()[0] ?? '',
        });
        if (seal.kind === 'fenced') {
          stats.fenced += 1;
          log.warn('batch fenced by a takeover before it sealed; its records will be retried', {
            table,
            batchId,
          });
          failMessages(mine);
          continue;
        }
        sealed.push({ table, batchId, files: files.length, bytes });
        await this.deps.commitQueue.requestCommit(table, batchId);
        resendCommits.delete(`${table}#${batchId}`);
      } catch (error) {
        // Before the seal: claims expire and are taken over. After it: the retry finds the batch SEALED
        // and re-sends the commit request; the sweeper does too.
        log.error('sealing batch failed', { table, batchId, error: String(error) });
        failMessages(mine);
      }
    }

    // B6'. Duplicates of batches sealed earlier: make sure their commit was requested (idempotent).
    for (const { table, batchId } of resendCommits.values()) {
      try {
        await this.deps.commitQueue.requestCommit(table, batchId);
      } catch (error) {
        log.warn('re-sending a commit request failed; the sweeper will', {
          table,
          batchId,
          error: String(error),
        });
      }
    }

    return {
      failedMessageIds: messages.map((m) => m.messageId).filter((id) => failed.has(id)),
      stats,
      sealed,
    };
  }

  private async claim(
    file: FileRef,
    batchId: string,
    leaseUntil: number,
    batchCache: Map<string, Promise<BatchRecord | undefined>>,
    resendCommits: Map<string, { table: string; batchId: string }>,
    stats: IngestResult['stats'],
  ): Promise<Outcome> {
    const { ledger, log } = this.deps;
    try {
      for (let round = 0; round < MAX_TAKEOVER_ROUNDS; round++) {
        const result = await ledger.claimFile(file, batchId, leaseUntil);
        if (result.kind === 'claimed') {
          stats.claimed += 1;
          return 'claimed';
        }
        const owner = result.owner;
        // An SDK retry of our own successful put.
        if (owner.batchId === batchId) {
          stats.claimed += 1;
          return 'claimed';
        }
        const cacheKey = `${file.table}#${owner.batchId}`;
        if (!batchCache.has(cacheKey)) batchCache.set(cacheKey, ledger.getBatch(file.table, owner.batchId));
        const batch = await batchCache.get(cacheKey);
        if (batch?.state === 'COMMITTED' || batch?.state === 'SEALED') {
          stats.duplicates += 1;
          if (batch.state === 'SEALED')
            resendCommits.set(cacheKey, { table: file.table, batchId: owner.batchId });
          return 'duplicate';
        }
        if (!batch && owner.leaseUntil > this.deps.now()) {
          stats.busy += 1;
          return 'busy';
        }
        // Owner ABORTED, or died before sealing and its lease ran out: fenced takeover.
        const takeover = await ledger.takeOver(file, owner.batchId, batchId, leaseUntil);
        if (takeover.kind === 'taken') {
          stats.takeovers += 1;
          stats.claimed += 1;
          log.info('claim taken over', {
            table: file.table,
            identity: file.identity,
            from: owner.batchId,
            to: batchId,
          });
          return 'claimed';
        }
        if (takeover.kind === 'batch-live') {
          batchCache.set(cacheKey, Promise.resolve(takeover.batch));
          if (takeover.batch.state === 'SEALED')
            resendCommits.set(cacheKey, { table: file.table, batchId: owner.batchId });
          stats.duplicates += 1;
          return 'duplicate';
        }
        // owner-changed: someone else moved it; look again.
      }
      stats.busy += 1;
      return 'busy';
    } catch (error) {
      stats.failedClaims += 1;
      const unknown = error instanceof UnknownOutcomeError || !(error instanceof InletError);
      log.warn('claim failed', {
        table: file.table,
        identity: file.identity,
        unknownOutcome: unknown,
        error: String(error),
      });
      return unknown ? 'unknown' : 'failed';
    }
  }
}

/**
 * Deliberately broken variants of the protocol, built around the product code (never in it): the
 * simulator must catch each within a few hundred seeds, or it is not testing what it claims to.
 */
import { logKey, parseCommit, partPosition, sinkAppId } from '../../shared/bronze/delta-log.ts';
import type { FileClaims, SinkCursor, SinkCursorStore } from '../../shared/bronze/ports.ts';
import type { ListedFile } from '../../shared/bronze/table-files.ts';
import type { ClaimResult } from '../../shared/ingestion/ledger.ts';
import { BATCH_STATE, type BatchRecord, type FileRef, type ObjectRef } from '../../shared/ingestion/model.ts';
import {
  classifyAwsError,
  DefiniteFailureError,
  InletError,
  UnknownOutcomeError,
} from '../../shared/kernel/errors.ts';
import type { PutIfAbsentResult } from '../../shared/kernel/put-if-absent.ts';
import { SimDeltaStore } from './fakes/bronze.ts';
import type { Item } from './fakes/dynamo.ts';
import { SimLandingCleaner } from './fakes/landing.ts';
import { SimLedger } from './fakes/ledger.ts';
import { SimTableFiles } from './fakes/table-files.ts';
import { type SdkError, sdkError } from './faults.ts';
import type { SimOptions } from './simulate.ts';

/** The SDK error as a classifier that knows nothing of earlier attempts would see it: one attempt, no marker. */
function lastAttemptOnly(error: unknown): unknown {
  const e = error as SdkError;
  if (!e?.$metadata) return error;
  const plain = sdkError(e.name, e.$metadata.httpStatusCode);
  plain.message = e.message;
  return plain;
}

/** (b) A claim held by a live batch that is not sealed yet is reported as a duplicate of a sealed one. */
class AckBusyLedger extends SimLedger {
  private readonly busyOwners = new Set<string>();

  override async claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult> {
    const result = await super.claimFile(file, batchId, leaseUntil);
    if (
      result.kind === 'owned' &&
      result.owner.batchId !== batchId &&
      result.owner.leaseUntil > this.ctx.worker.now()
    )
      this.busyOwners.add(`${file.table}#${result.owner.batchId}`);
    return result;
  }

  override async getBatch(table: string, batchId: string): Promise<BatchRecord | undefined> {
    const batch = await super.getBatch(table, batchId);
    if (!batch && this.busyOwners.has(`${table}#${batchId}`))
      return { table, batchId, state: BATCH_STATE.sealed };
    return batch;
  }
}

/** (c) A claim whose outcome is unknown counts as refused, so its batch seals without it. */
class SealUnknownLedger extends SimLedger {
  override async claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult> {
    try {
      return await super.claimFile(file, batchId, leaseUntil);
    } catch (error) {
      if (error instanceof UnknownOutcomeError) throw new DefiniteFailureError(error.message, error);
      throw error;
    }
  }
}

/** (d) The reservation no longer requires the batch to be SEALED. */
class NoSealedCheckLedger extends SimLedger {
  protected override batchMustBeSealed(_old: Item | undefined): boolean {
    return true;
  }
}

/**
 * (e) The bronze sink's cursor advanced before the Delta commit is written: a crash, a timeout or a failed
 * put between the two leaves the cursor past a version the table never got (docs/bronze.md, "Exactly once").
 */
class CursorFirstDelta extends SimDeltaStore {
  constructor(
    private readonly linked: ConstructorParameters<typeof SimDeltaStore>[0] & { cursors: SinkCursorStore },
  ) {
    super(linked);
  }

  override async putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    const table = /"appId":"inlet-bronze-([^".]+)/.exec(body)?.[1] ?? '';
    const from = await this.linked.cursors.get(table);
    const commit = parseCommit(table, body);
    const txn = commit.txns[0];
    if (txn) {
      const to =
        txn.appId === sinkAppId(table)
          ? { manifestVersion: txn.version, filesDone: 0 }
          : partPosition(txn.version);
      await this.linked.cursors.advance(from, {
        ...from,
        ...to,
        deltaVersion,
        rows: from.rows + commit.rows,
        rescued: from.rescued + commit.rescued,
      });
    }
    return super.putCommitIfAbsent(deltaVersion, body);
  }
}

/**
 * (g) The Delta commit as Spark's default S3 LogStore makes it: a plain put, no `If-None-Match` (docs/bronze.md
 * "Other writers on the table"). Two sinks racing on a version, or the sink and another writer, overwrite
 * each other's log entry; with data file names unique per attempt the bodies differ, so it shows.
 */
class PlainPutDelta extends SimDeltaStore {
  override async putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    await this.putLogFile(logKey(deltaVersion).slice('_delta_log/'.length), body);
    return 'created';
  }
}

/**
 * (h) The sink as a single writer of its table (review F12): it commits only at the Delta version its own
 * commits so far would give it (manifest version v at Delta version v-1 before parts) and takes anything
 * else there for a conflict that stops the table, as the sink before next-free-version commits did. Another
 * writer's commit (a VACUUM, table properties, a compaction) then stops the table for good.
 */
class SingleWriterDelta extends SimDeltaStore {
  private table = '';

  override async putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    this.table = /"appId":"inlet-bronze-([^".]+)/.exec(body)?.[1] ?? this.table;
    let ours = 0;
    for (const version of await this.listCommits()) {
      const text = await this.getCommit(version);
      if (text !== undefined && parseCommit(this.table, text).ours) ours += 1;
    }
    if (ours !== deltaVersion)
      throw new InletError(
        `bronze table ${this.table}: Delta version ${deltaVersion} is not the sink's own`,
        {
          retryable: false,
        },
      );
    return super.putCommitIfAbsent(deltaVersion, body);
  }
}

/**
 * (i) Parts that ran out of time never get smaller (review F2): the cursor drops `partFiles`, so a version
 * whose part outlasts a run is started over, whole, by every run, and the table never moves again.
 */
class NoShrinkCursors implements SinkCursorStore {
  constructor(private readonly inner: SinkCursorStore) {}
  get = (table: string) => this.inner.get(table);
  advance = (from: SinkCursor, { partFiles: _, ...to }: SinkCursor) => this.inner.advance(from, to);
  getCleaned = (table: string) => this.inner.getCleaned(table);
  advanceCleaned = (table: string, from: number, to: number) => this.inner.advanceCleaned(table, from, to);
}

/**
 * (k) cleanSource as it was: delete and copy by key, whatever write the key holds now (no If-Match), so a
 * rewrite made after the sink read the key is destroyed.
 */
class ByKeyCleaner extends SimLandingCleaner {
  protected override named(ref: ObjectRef): string {
    const body = this.ctx.landing.objects.get(ref.key);
    if (body === undefined) throw sdkError('NoSuchKey', 404);
    return body;
  }
}

/** (l) cleanSource that does not wait for the other tables routing a file: they all hold it already. */
const holdsEverything: FileClaims = { committedVersion: async () => 0 };

/**
 * (m) Optimize without the conflict check (docs/protocol.md O4): a version another writer took first is
 * stepped over whatever it removed, so when two optimizes (or another writer's compaction) rewrite the same
 * file at once, its rows are added twice.
 */
class NoConflictCheckDelta extends SimDeltaStore {
  private putAt = -1;

  override async putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    this.putAt = deltaVersion;
    return super.putCommitIfAbsent(deltaVersion, body);
  }

  /** The version its put found taken, read without its removes. */
  override async getCommit(deltaVersion: number): Promise<string | undefined> {
    const text = await super.getCommit(deltaVersion);
    if (deltaVersion !== this.putAt) return text;
    return text
      ?.split('\n')
      .filter((line) => !line.startsWith('{"remove"'))
      .join('\n');
  }
}

/**
 * (n) Vacuum that takes every file without a tombstone for an old orphan (docs/protocol.md V-I2): the
 * listing's `LastModified` ignored, so a data file the sink or optimize has uploaded and not yet committed is
 * deleted, and the commit then names a file that is not there.
 */
class AgelessTableFiles extends SimTableFiles {
  protected override listed(files: ListedFile[]): ListedFile[] {
    return files.map((f) => ({ ...f, lastModified: 0 }));
  }
}

/** Each variant breaks one rule of main's protocol; everything else is main's own code. */
export const VARIANTS = {
  /** (a) "Any 4xx means not applied": the final error's earlier attempts are ignored. */
  'old-classification': {
    plumbing: {
      classify: (operation: string, error: unknown) => classifyAwsError(operation, lastAttemptOnly(error)),
    },
  },
  'ack-busy': { plumbing: { ledger: (ctx) => new AckBusyLedger(ctx) } },
  'seal-unknown': { plumbing: { ledger: (ctx) => new SealUnknownLedger(ctx) } },
  'no-sealed-check': { plumbing: { ledger: (ctx) => new NoSealedCheckLedger(ctx) } },
  'sink-cursor-first': { plumbing: { delta: (ctx) => new CursorFirstDelta(ctx) } },
  /** (f) No nudge schedule: a table whose last trigger the rule lost stays behind its manifests. */
  'no-sink-schedule': { plumbing: { noSinkSchedule: true } },
  'sink-plain-put': { plumbing: { delta: (ctx) => new PlainPutDelta(ctx) } },
  // In every seed another writer works on the table (half the seeds have one otherwise).
  'sink-single-writer': { plumbing: { delta: (ctx) => new SingleWriterDelta(ctx), foreignWriter: true } },
  /**
   * (j) Data file names the same on every attempt (review F11): a later part of a version, or a replay over
   * changed input, overwrites a file an earlier commit names.
   */
  'sink-reused-names': { plumbing: { attemptId: () => 'attempt' } },
  'sink-no-shrink': { plumbing: { cursors: (cursors) => new NoShrinkCursors(cursors) } },
  'clean-by-key': { scenario: 'clean', plumbing: { cleaner: (ctx) => new ByKeyCleaner(ctx) } },
  'clean-without-waiting': { scenario: 'clean', plumbing: { claims: () => holdsEverything } },
  'optimize-no-conflict-check': {
    scenario: 'optimize',
    plumbing: { optimizeDelta: (ctx) => new NoConflictCheckDelta(ctx) },
  },
  'vacuum-ageless': { scenario: 'optimize', plumbing: { tableFiles: (ctx) => new AgelessTableFiles(ctx) } },
  /**
   * (o) Vacuum that does not first bring the symlink manifests to the head: a file an optimize removed is
   * deleted while a manifest the sink wrote before the optimize still lists it.
   */
  'vacuum-before-manifests': { scenario: 'optimize', plumbing: { vacuumBeforeManifests: true } },
} satisfies Record<string, Pick<SimOptions, 'plumbing' | 'scenario'>>;

export type VariantName = keyof typeof VARIANTS;

/**
 * Deliberately broken variants of the protocol, built around the product code (never in it): the
 * simulator must catch each within a few hundred seeds, or it is not testing what it claims to.
 */
import { parseCommit } from '../../shared/bronze/delta-log.ts';
import type { FileClaims, SinkCursorStore } from '../../shared/bronze/ports.ts';
import { classifyAwsError, DefiniteFailureError, UnknownOutcomeError } from '../../shared/errors.ts';
import type { ClaimResult } from '../../shared/ledger/ledger.ts';
import type { BatchRecord, FileRef, ObjectRef } from '../../shared/model.ts';
import type { PutIfAbsentResult } from '../../shared/storage/batch-store.ts';
import { SimDeltaStore } from './fakes/bronze.ts';
import type { Item } from './fakes/dynamo.ts';
import { SimLandingCleaner } from './fakes/landing.ts';
import { SimLedger } from './fakes/ledger.ts';
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
    if (!batch && this.busyOwners.has(`${table}#${batchId}`)) return { table, batchId, state: 'SEALED' };
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
    const table = /"appId":"inlet-bronze-([^"]+)"/.exec(body)?.[1] ?? '';
    const from = await this.linked.cursors.get(table);
    if (from.deltaVersion === deltaVersion - 1) {
      const commit = parseCommit(table, body);
      await this.linked.cursors.advance(from, {
        table,
        deltaVersion,
        schema: commit.schema ?? from.schema,
        rows: from.rows + commit.rows,
        rescued: from.rescued + commit.rescued,
      });
    }
    return super.putCommitIfAbsent(deltaVersion, body);
  }
}

/**
 * (g) cleanSource as it was: delete and copy by key, whatever write the key holds now (no If-Match), so a
 * rewrite made after the sink read the key is destroyed.
 */
class ByKeyCleaner extends SimLandingCleaner {
  protected override named(ref: ObjectRef): string {
    const body = this.ctx.landing.objects.get(ref.key);
    if (body === undefined) throw sdkError('NoSuchKey', 404);
    return body;
  }
}

/** (h) cleanSource that does not wait for the other tables routing a file: they all hold it already. */
const holdsEverything: FileClaims = { committedVersion: async () => 0 };

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
  'clean-by-key': { scenario: 'clean', plumbing: { cleaner: (ctx) => new ByKeyCleaner(ctx) } },
  'clean-without-waiting': { scenario: 'clean', plumbing: { claims: () => holdsEverything } },
} satisfies Record<string, Pick<SimOptions, 'plumbing' | 'scenario'>>;

export type VariantName = keyof typeof VARIANTS;

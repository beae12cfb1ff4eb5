// Group commit: a backlog of sealed batches of one table drained by the committer, with grouping (the
// default limits) and without (maxBatches 1), side by side on the same emulator. The backlog is sealed
// directly through the ledger and the staged lists (what the batcher leaves), then every batch's commit
// request is queued as the batcher sends it, and the commit queue is drained until no batch waits.
import pLimit from 'p-limit';
import { type AwsClients, createClients, destroyClients } from '../local/aws/clients.ts';
import { pollOnce } from '../local/poller.ts';
import { DEFAULT_GROUP_LIMITS, type GroupLimits } from '../shared/ingestion/commit-group.ts';
import { makeCommitterHandler } from '../shared/ingestion/committer-handler.ts';
import { PipelineHarness } from '../test/support/harness.ts';
import { sealBatchDirectly } from '../test/support/seal.ts';
import { afterHop, type Benchmark, log, quick } from './support.ts';

export interface GroupCommitResult {
  readonly batches: number;
  readonly filesPerBatch: number;
  readonly filesPerSecond: number;
  readonly versionsPerSecond: number;
  readonly versions: number;
  readonly seconds: number;
  /** The ungrouped drain's backlog: `batches`, or fewer in the full run (one version each takes long). */
  readonly ungroupedBatches: number;
  readonly ungroupedFilesPerSecond: number;
  readonly ungroupedVersionsPerSecond: number;
  readonly ungroupedSeconds: number;
  readonly limits: GroupLimits;
}

const TABLE = 'backlog';

async function drainBacklog(
  clients: AwsClients,
  batches: number,
  filesPerBatch: number,
  group: GroupLimits,
  lambdaInvokeMs: number,
) {
  const h = await PipelineHarness.create(clients, {
    config: { tables: [{ name: TABLE, prefix: `${TABLE}/` }], leaseSeconds: 300 },
    visibilityTimeout: 300,
    notifications: false,
    countRequests: false,
  });
  const limit = pLimit(8);
  const ids = await Promise.all(
    Array.from({ length: batches }, (_, index) =>
      limit(() =>
        sealBatchDirectly(h.ports('Batcher'), {
          table: TABLE,
          bucket: h.resources.landingBucket,
          index,
          files: filesPerBatch,
        }),
      ),
    ),
  );
  ids.sort();
  for (let i = 0; i < ids.length; i += 100)
    await h.ports('Batcher').commitQueue.requestCommits(TABLE, ids.slice(i, i + 100), 'bench');
  const handler = afterHop(
    lambdaInvokeMs,
    makeCommitterHandler({ ...h.ports('Committer'), log: h.log, metrics: h.metrics, ...h.clock(), group }),
  );

  const started = performance.now();
  for (;;) {
    const poll = await pollOnce(
      { client: h.clients.sqs, queueUrl: h.resources.commitQueue.url, batchSize: 10 },
      handler,
    );
    if (poll.received > 0) continue;
    if ((await h.ledger.listSealedForCommit(TABLE, 1)).length === 0) break;
  }
  const ms = performance.now() - started;
  const head = await h.ledger.getTable(TABLE);
  if (head.files !== batches * filesPerBatch || head.pending)
    throw new Error(`group commit bench: ${head.files} files committed of ${batches * filesPerBatch}`);
  return { ms, versions: head.head, files: head.files };
}

const perSecond = (n: number, ms: number) => Math.round((n / ms) * 1000 * 10) / 10;

export async function groupCommitBench(
  clients: AwsClients,
  options: {
    readonly batches: number;
    /** The ungrouped drain's backlog. @default batches */
    readonly ungroupedBatches?: number;
    readonly filesPerBatch: number;
    /** Each committer invocation's own latency (AWS-latency mode). @default 0 */
    readonly lambdaInvokeMs?: number;
  },
): Promise<GroupCommitResult> {
  const { batches, ungroupedBatches = batches, filesPerBatch, lambdaInvokeMs = 0 } = options;
  const grouped = await drainBacklog(clients, batches, filesPerBatch, DEFAULT_GROUP_LIMITS, lambdaInvokeMs);
  const single = await drainBacklog(
    clients,
    ungroupedBatches,
    filesPerBatch,
    { ...DEFAULT_GROUP_LIMITS, maxBatches: 1 },
    lambdaInvokeMs,
  );
  return {
    batches: options.batches,
    filesPerBatch: options.filesPerBatch,
    filesPerSecond: perSecond(grouped.files, grouped.ms),
    versionsPerSecond: perSecond(grouped.versions, grouped.ms),
    versions: grouped.versions,
    seconds: Math.round(grouped.ms) / 1000,
    ungroupedBatches,
    ungroupedFilesPerSecond: perSecond(single.files, single.ms),
    ungroupedVersionsPerSecond: perSecond(single.versions, single.ms),
    ungroupedSeconds: Math.round(single.ms) / 1000,
    limits: DEFAULT_GROUP_LIMITS,
  };
}

/**
 * `groupCommit`: 1,000 sealed batches of 10 files grouped (the size), against one version per batch
 * on the first 100 of such a backlog: 1,000 versions one after the other took 589 s alone at a load of 14.6
 * here (docs/performance.md), a sixth of the full run's budget, for a per-version rate that 100 versions
 * measure as well. `--quick`: 50 and 50.
 */
export const groupCommit: Benchmark = {
  name: 'groupCommit',
  async run({ target, hops }) {
    log('group commit');
    const clients = createClients(target);
    try {
      return {
        groupCommit: await groupCommitBench(clients, {
          batches: quick ? 50 : 1_000,
          ungroupedBatches: quick ? 50 : 100,
          filesPerBatch: 10,
          lambdaInvokeMs: hops?.lambdaInvokeMs ?? 0,
        }),
      };
    } finally {
      destroyClients(clients);
    }
  },
};

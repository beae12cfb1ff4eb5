/**
 * The Lambda functions as event-source mappings drive them: poll, invoke with a timeout, delete what
 * succeeded. A crashed or timed-out invocation deletes nothing; its messages return after the visibility
 * timeout, and a fresh instance takes the slot.
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { optimizeTable } from '../../shared/bronze/optimize.ts';
import { makeSinkHandler } from '../../shared/bronze/sink-handler.ts';
import { projectManifests } from '../../shared/bronze/symlink-manifest.ts';
import { vacuumTable } from '../../shared/bronze/vacuum.ts';
import { makeBatcherHandler } from '../../shared/ingestion/batcher-handler.ts';
import { makeCommitterHandler } from '../../shared/ingestion/committer-handler.ts';
import { sweepStale } from '../../shared/ingestion/sweep.ts';
import { type Received, SimMessageVisibility, type SqsQueue } from './fakes/sqs.ts';
import { foreignCommit } from './foreign-writer.ts';
import { never, Worker } from './scheduler.ts';
import {
  bronzePrefixes,
  MANIFEST_BUCKET,
  OPTIMIZE_TARGET_BYTES,
  TIMING,
  VACUUM_RETENTION_MS,
  type World,
} from './world.ts';

export type Role = 'batcher' | 'committer' | 'sweeper' | 'sink' | 'foreign' | 'optimize' | 'vacuum';

/** The optimize and vacuum functions' timeout in the simulation. */
const OPTIMIZE_TIMEOUT_MS = 60_000;

export class Fleet {
  /** Invocations running now, so the end of the run can tell "idle" from "stuck". */
  busy = 0;
  private incarnations = 0;

  constructor(private readonly world: World) {
    world.scheduler.onCrash = (worker) => {
      this.busy -= 1;
      // Lambda starts another instance for the next poll.
      const role = worker.name.split('.')[0] as Role;
      this.start(role);
    };
  }

  start(role: Role): void {
    const { rng, scheduler } = this.world;
    this.incarnations += 1;
    const worker = new Worker(`${role}.${this.incarnations}`, rng.int(-1000, 1000), scheduler);
    const loops = {
      batcher: this.batcher,
      committer: this.committer,
      sweeper: this.sweeper,
      sink: this.sink,
      foreign: this.foreign,
      optimize: this.optimize,
      vacuum: this.vacuum,
    };
    const loop = loops[role];
    void loop.call(this, worker);
  }

  private async invoke(worker: Worker, timeoutMs: number, body: () => Promise<void>): Promise<void> {
    this.busy += 1;
    worker.deadline = this.world.scheduler.now + timeoutMs;
    try {
      await body();
    } catch (error) {
      // A function error: the event-source mapping deletes nothing; every message comes back.
      this.world.scheduler.log(`${worker.name} invocation failed: ${String(error)}`);
    }
    worker.deadline = Number.POSITIVE_INFINITY;
    this.busy -= 1;
  }

  private async batcher(worker: Worker): Promise<void> {
    const { scheduler, ingest, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, rng.int(500, 5_000));
      const received = ingest.receive(rng.int(1, 10));
      if (received.length === 0) continue;
      scheduler.log(`${worker.name} invoked with ${received.map((r) => r.message.messageId).join(',')}`);
      await this.invoke(worker, TIMING.batcherTimeoutMs, async () => {
        const handler = makeBatcherHandler({
          ...this.world.ports(worker),
          newBatchId: this.world.newBatchId,
          retries: this.retries(worker, ingest),
        });
        const response = await handler(sqsEvent(received, 'ingest'), {
          getRemainingTimeInMillis: () => worker.deadline - scheduler.now,
        });
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        scheduler.log(`${worker.name} done; failed: ${[...failed].join(',') || 'none'}`);
        for (const r of received) if (!failed.has(r.message.messageId)) ingest.delete(r);
      });
    }
  }

  /** ChangeMessageVisibilityBatch on a queue, through the SDK fault model like any call. */
  private retries(worker: Worker, queue: SqsQueue): SimMessageVisibility {
    return new SimMessageVisibility({ queue, aws: this.world.aws, worker });
  }

  private async committer(worker: Worker): Promise<void> {
    const { scheduler, commits, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, rng.int(200, 3_000));
      const received = commits.receive(rng.int(1, 10));
      if (received.length === 0) continue;
      scheduler.log(`${worker.name} invoked with ${received.map((r) => r.message.body).join(' ')}`);
      await this.invoke(worker, TIMING.committerTimeoutMs, async () => {
        const handler = makeCommitterHandler({
          ...this.world.ports(worker),
          retries: this.retries(worker, commits),
        });
        const response = await handler(sqsEvent(received, 'commit.fifo'), {
          getRemainingTimeInMillis: () => worker.deadline - scheduler.now,
        });
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        scheduler.log(`${worker.name} done; failed: ${[...failed].join(',') || 'none'}`);
        for (const r of received) if (!failed.has(r.message.messageId)) commits.delete(r);
      });
    }
  }

  /**
   * The bronze sink Lambda on its FIFO queue: the real handler and SinkTable over the fakes, holding its
   * messages with the visibility lease (its beats on the simulated clock, lost in some seeds).
   */
  private async sink(worker: Worker): Promise<void> {
    const { scheduler, sinkQueue, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, rng.int(200, 3_000));
      const received = sinkQueue.receive(rng.int(1, 10));
      if (received.length === 0) continue;
      scheduler.log(`${worker.name} invoked with ${received.map((r) => r.message.messageId).join(',')}`);
      this.holdTables(worker, received);
      await this.invoke(worker, this.world.sinkTimeoutMs, async () => {
        const { config, store, log, now, sleep, random } = this.world.ports(worker);
        const handler = makeSinkHandler({
          config,
          store,
          log,
          now,
          sleep,
          random,
          ...this.world.sinkPorts(worker),
          retries: this.retries(worker, sinkQueue),
          lease: {
            visibility: new SimMessageVisibility({
              queue: sinkQueue,
              aws: this.world.aws,
              worker,
              lost: () => this.world.heartbeatLost(),
            }),
            seconds: TIMING.sinkLeaseMs / 1000,
            queueVisibilitySeconds: sinkQueue.options.visibilityMs / 1000,
            // A timer firing is no point a Lambda can crash at (the model crashes workers between calls):
            // the beat's wait resumes on the worker's behalf, and only stops once the worker is dead.
            sleep: (ms, signal) =>
              unlessAborted(
                scheduler.sleep(undefined, ms, worker).then(() => (worker.crashed ? never : undefined)),
                signal,
              ),
            now,
          },
        });
        const response = await handler(sqsEvent(received, 'sink.fifo'), {
          getRemainingTimeInMillis: () => worker.deadline - scheduler.now,
        });
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        scheduler.log(`${worker.name} done; failed: ${[...failed].join(',') || 'none'}`);
        for (const r of received) if (!failed.has(r.message.messageId)) sinkQueue.delete(r);
      });
      this.world.sinkRuns.delete(worker);
    }
  }

  /** Records the tables (groups) an invocation holds, counting each it shares with a live one. */
  private holdTables(worker: Worker, received: readonly Received[]): void {
    const tables = new Set(received.map((r) => r.message.group ?? ''));
    for (const [other, held] of this.world.sinkRuns) {
      const shared = [...tables].filter((t) => held.has(t));
      if (other.crashed || shared.length === 0) continue;
      this.world.sinkOverlaps += 1;
      this.world.scheduler.log(
        `${worker.name} runs ${shared.join(',')} while ${other.name} holds it (overlap)`,
      );
    }
    this.world.sinkRuns.set(worker, tables);
  }

  /**
   * Another Delta writer on each bronze table while faults run (docs/bronze.md "Other writers on the
   * table"), creating its log entries with `If-None-Match` as delta-rs with conditional put does: now and
   * then a logged VACUUM, a table-properties change or a one-file compaction, at the next free version. It
   * stops with the faults, so the pipeline can go quiet.
   */
  private async foreign(worker: Worker): Promise<void> {
    const { scheduler, foreignRng: rng } = this.world;
    for (let round = 1; ; round++) {
      await scheduler.sleep(worker, rng.int(5_000, 40_000));
      if (!this.world.faultsOn) return;
      await this.invoke(worker, 60_000, async () => {
        for (const { prefix } of bronzePrefixes(this.world.config)) {
          const outcome = await foreignCommit(this.world, worker, prefix, round);
          scheduler.log(`${worker.name} foreign ${outcome}`);
        }
      });
    }
  }

  /**
   * The scheduled optimize (the optimize scenario runs two, so they race each other as well as the sink):
   * the product's optimizeTable over the fakes, in a 60-second function that keeps 15 s back.
   */
  private async optimize(worker: Worker): Promise<void> {
    const { scheduler, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, rng.int(2_000, 15_000));
      await this.invoke(worker, OPTIMIZE_TIMEOUT_MS, async () => {
        const { now, sleep, random } = this.world.ports(worker);
        for (const { table, prefix } of bronzePrefixes(this.world.config)) {
          const { delta, files, newId } = this.world.maintenancePorts(worker, prefix);
          const result = await optimizeTable(
            { delta, files, newId, now, sleep, random },
            {
              table,
              targetFileBytes: OPTIMIZE_TARGET_BYTES,
              finishBy: worker.deadline - 15_000,
              rowGroupRows: 2,
            },
          );
          scheduler.log(`${worker.name} optimize ${table} ${JSON.stringify(result)}`);
        }
      });
    }
  }

  /**
   * The scheduled vacuum, with the simulation's retention (world.ts). A table with symlink manifests has them
   * brought to the head first and is not vacuumed while they lag, as the maintenance handler does
   * (shared/bronze/maintenance-handler.ts; its config floors, a day's retention and 1 MiB files, are too big
   * for a simulated hour, so the steps are called here).
   */
  private async vacuum(worker: Worker): Promise<void> {
    const { scheduler, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, rng.int(3_000, 15_000));
      await this.invoke(worker, OPTIMIZE_TIMEOUT_MS, async () => {
        for (const { table, prefix } of bronzePrefixes(this.world.config)) {
          const { vacuumDelta: delta, files, manifests } = this.world.maintenancePorts(worker, prefix);
          const bronze = this.world.config.tables.find((t) => t.name === table)?.bronze;
          if (bronze?.symlinkManifest && !this.world.plumbing.vacuumBeforeManifests) {
            const listed = await projectManifests({
              table,
              delta,
              manifests,
              location: `s3://${MANIFEST_BUCKET}/${prefix}`,
              version: Number.POSITIVE_INFINITY,
              since: undefined,
              log: this.world.log(worker),
            });
            if (!listed) throw new Error('symlink manifests not written: vacuum left for the next run');
          }
          const result = await vacuumTable(
            { delta, files, now: worker.now },
            { table, retentionMs: VACUUM_RETENTION_MS },
          );
          scheduler.log(`${worker.name} vacuum ${table} ${JSON.stringify(result)}`);
        }
      });
    }
  }

  private async sweeper(worker: Worker): Promise<void> {
    const { scheduler, rng } = this.world;
    for (;;) {
      await scheduler.sleep(worker, TIMING.sweepEveryMs + rng.int(0, 1_000));
      await this.invoke(worker, TIMING.batcherTimeoutMs, async () => {
        const result = await sweepStale(this.world.ports(worker), TIMING.staleAfterMs);
        if (result.resent + result.stalePending > 0)
          scheduler.log(`${worker.name} swept ${JSON.stringify(result)}`);
      });
    }
  }
}

function sqsEvent(received: readonly Received[], queue: string): SQSEvent {
  return {
    Records: received.map(
      ({ message }) =>
        ({
          messageId: message.messageId,
          receiptHandle: String(message.receipt),
          body: message.body,
          attributes: {
            ApproximateReceiveCount: String(message.receiveCount),
            SentTimestamp: String(message.sentAt),
            MessageGroupId: message.group,
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${queue}`,
          awsRegion: 'us-east-1',
        }) as unknown as SQSRecord,
    ),
  };
}

/** A simulated sleep the lease can cut short (the parked call still resumes later, to no one). */
function unlessAborted(sleep: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void sleep.then(done);
  });
}

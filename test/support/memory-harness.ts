/**
 * The pipeline in memory: the real handlers and use cases on the simulation's fakes (test/sim/fakes,
 * held to the adapters' behaviour by test/contract), on the simulation's clock, with its fault model off.
 * The same driving surface as PipelineHarness (one invocation at a time, crash plans, runUntilQuiet,
 * verify), so protocol scenarios and the crash matrix run in milliseconds with no emulator and no sleeps.
 *
 * Time only moves when the harness steps it: every port call parks on the scheduler, and `run` steps the
 * scheduler until the awaited work settles. A lease expires because a test `advance`s past it.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { PollResult } from '../../local/poller.ts';
import {
  type PipelineConfig,
  type PipelineConfigInput,
  parsePipelineConfig,
} from '../../shared/config/pipeline-config.ts';
import type {
  BatchCommittedEvent,
  BatchStore,
  CommitQueue,
  EventPublisher,
} from '../../shared/ingestion/batch-store.ts';
import { makeBatcherHandler } from '../../shared/ingestion/batcher-handler.ts';
import { makeCommitterHandler } from '../../shared/ingestion/committer-handler.ts';
import type { Ledger, LedgerQueries } from '../../shared/ingestion/ledger.ts';
import type { Manifest } from '../../shared/ingestion/manifest.ts';
import { commitsInFlight, sweepStale } from '../../shared/ingestion/sweep.ts';
import type { Clock } from '../../shared/kernel/clock.ts';
import { classifyAwsError } from '../../shared/kernel/errors.ts';
import type { Log } from '../../shared/kernel/log.ts';
import { MemoryMetrics } from '../../shared/kernel/metrics.ts';
import { DynamoTable } from '../sim/fakes/dynamo.ts';
import { simPorts } from '../sim/fakes/ports.ts';
import { S3Bucket } from '../sim/fakes/s3.ts';
import { EventBus, type Received, SqsQueue } from '../sim/fakes/sqs.ts';
import { Aws, NO_FAULTS } from '../sim/faults.ts';
import { Rng, Scheduler, Worker } from '../sim/scheduler.ts';
import type { Plumbing } from '../sim/world.ts';
import { s3Notification, sqsRecord } from './events.ts';
import { type CrashPlan, FaultInjector } from './faults.ts';
import type { LogLine } from './harness.ts';
import { type ExpectedFile, type Verdict, verifyPipeline } from './verdict.ts';

export interface MemoryHarnessOptions {
  readonly config: PipelineConfigInput;
  /** Picks the fakes' latencies and tie-breaks; a scenario replays exactly with the same seed. @default 1 */
  readonly seed?: number;
  /** Both queues' visibility timeout, as the emulator harness's resources. @default 1_000 */
  readonly visibilityMs?: number;
  /** @default 50 */
  readonly maxReceiveCount?: number;
  /** A broken variant of test/sim/variants.ts, to show a test catches it. */
  readonly plumbing?: Plumbing;
}

interface Ports {
  ledger: Ledger & LedgerQueries;
  store: BatchStore;
  commitQueue: CommitQueue;
  events: EventPublisher;
}

// Quarantine keys and event times are dates: start the clock at a plausible one rather than 1970.
const EPOCH = Date.parse('2026-11-30T00:00:00.000Z');

export class MemoryHarness {
  readonly metrics = new MemoryMetrics();
  readonly logs: LogLine[] = [];
  readonly landingBucket = 'landing';
  readonly config: PipelineConfig;
  readonly rng: Rng;
  readonly scheduler: Scheduler;
  readonly db: DynamoTable;
  readonly bucket: S3Bucket;
  readonly ingest: SqsQueue;
  readonly commits: SqsQueue;
  readonly bus: EventBus;
  clockSkewMs = 0;
  readonly now = () => this.scheduler.now + this.clockSkewMs;
  readonly log: Log = {
    debug: (message, extra) => this.logs.push({ level: 'debug', message, extra }),
    info: (message, extra) => this.logs.push({ level: 'info', message, extra }),
    warn: (message, extra) => this.logs.push({ level: 'warn', message, extra }),
    error: (message, extra) => this.logs.push({ level: 'error', message, extra }),
  };
  readonly aws: Aws;
  private readonly classify: NonNullable<Plumbing['classify']>;
  private invocations = 0;
  private batches = 0;
  /** The ports as the test itself calls them: each call runs to completion on the simulated clock. */
  private readonly direct: Ports;
  private readonly testWorker: Worker;

  constructor(private readonly options: MemoryHarnessOptions) {
    this.config = parsePipelineConfig(options.config);
    this.rng = new Rng(options.seed ?? 1);
    this.scheduler = new Scheduler(this.rng);
    this.scheduler.now = EPOCH;
    this.aws = new Aws(this.scheduler, this.rng, NO_FAULTS);
    this.db = new DynamoTable(this.scheduler);
    this.bucket = new S3Bucket(this.scheduler);
    const queue = (name: string, fifo: boolean) =>
      new SqsQueue(name, this.scheduler, this.rng, {
        fifo,
        visibilityMs: options.visibilityMs ?? 1_000,
        maxReceiveCount: options.maxReceiveCount ?? 50,
        duplicateRate: 0,
      });
    this.ingest = queue('ingest', false);
    this.commits = queue('commit', true);
    this.bus = new EventBus(() => 0, this.rng);
    this.classify = options.plumbing?.classify ?? classifyAwsError;
    this.testWorker = new Worker('test', 0, this.scheduler);
    const raw = this.ports(this.testWorker);
    this.direct = {
      ledger: this.driven(raw.ledger),
      store: this.driven(raw.store),
      commitQueue: this.driven(raw.commitQueue),
      events: this.driven(raw.events),
    };
  }

  static async create(options: MemoryHarnessOptions): Promise<MemoryHarness> {
    return new MemoryHarness(options);
  }

  get ledger(): Ledger & LedgerQueries {
    return this.direct.ledger;
  }

  get store(): BatchStore {
    return this.direct.store;
  }

  get published(): readonly BatchCommittedEvent[] {
    return this.bus.events;
  }

  /** Steps the simulated world until `work` settles (product code sleeps on the clock its deps give it). */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const done = () => {
      settled = true;
    };
    work.then(done, done);
    // Work parks on its next port call only after its pending microtasks ran: idle twice in a row
    // (nothing parked across a macrotask turn) means it waits on something outside the simulation.
    for (let idle = 0; !settled; ) {
      if (await this.scheduler.step()) {
        idle = 0;
        continue;
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!settled && ++idle >= 2)
        throw new Error(
          'the awaited work waits on something outside the simulation (a Gate not opened? a real timer?)',
        );
    }
    return work;
  }

  /** Lets `ms` of simulated time pass, running whatever falls due meanwhile. */
  advance(ms: number): Promise<void> {
    return this.run(this.scheduler.sleep(undefined, ms));
  }

  /** The ports of one Lambda instance (each its own worker, as two Lambdas are two DynamoDB clients). */
  ports(worker: Worker = this.worker('lambda'), injector?: FaultInjector): Ports {
    const { ledger, store, commitQueue, events } = simPorts(this, worker, {
      classify: this.options.plumbing?.classify,
      ledger: this.options.plumbing?.ledger,
      faulty: () => false,
    });
    const ports: Ports = { ledger, store, commitQueue, events };
    if (!injector) return ports;
    return {
      ledger: injector.wrap('ledger', ports.ledger),
      store: injector.wrap('store', ports.store),
      commitQueue: injector.wrap('commitQueue', ports.commitQueue),
      events: injector.wrap('events', ports.events),
    };
  }

  private worker(role: string): Worker {
    this.invocations += 1;
    return new Worker(`${role}.${this.invocations}`, 0, this.scheduler);
  }

  /** A crash plan's injector, classifying as this harness's adapters do. */
  injector(crash?: CrashPlan): FaultInjector {
    return new FaultInjector(crash, this.classify);
  }

  /**
   * The harness's clock as one Lambda instance sees it (the test's own by default): sleeps park on the
   * scheduler as that worker, jitter draws from the seed.
   */
  clock(worker: Worker = this.testWorker): Clock {
    return { now: this.now, sleep: (ms) => this.scheduler.sleep(worker, ms), random: () => this.rng.next() };
  }

  private rawBatcher(injector?: FaultInjector) {
    const worker = this.worker('batcher');
    return makeBatcherHandler({
      ...this.ports(worker, injector),
      ...this.clock(worker),
      config: this.config,
      log: this.log,
      metrics: this.metrics,
      // Ids in creation order, the same on every run: a scenario replays exactly.
      newBatchId: () => `B${String(++this.batches).padStart(4, '0')}`,
    });
  }

  private rawCommitter(injector?: FaultInjector) {
    const worker = this.worker('committer');
    return makeCommitterHandler({
      ...this.ports(worker, injector),
      ...this.clock(worker),
      log: this.log,
      metrics: this.metrics,
    });
  }

  /** A batcher Lambda the test invokes itself; invocations may overlap (racing batchers). */
  batcher(injector?: FaultInjector): (event: SQSEvent) => Promise<SQSBatchResponse> {
    const handler = this.rawBatcher(injector);
    return (event) => this.run(handler(event));
  }

  committer(injector?: FaultInjector): (event: SQSEvent) => Promise<SQSBatchResponse> {
    const handler = this.rawCommitter(injector);
    return (event) => this.run(handler(event));
  }

  /** One batcher invocation on up to `batchSize` messages; with `crash`, it dies at that point. */
  pollIngest(crash?: CrashPlan, batchSize = 10): Promise<PollResult & { injector: FaultInjector }> {
    const injector = this.injector(crash);
    return this.poll(this.ingest, batchSize, injector, this.rawBatcher(injector));
  }

  /** One committer invocation (Lambda on a FIFO queue takes up to 10). */
  pollCommit(crash?: CrashPlan): Promise<PollResult & { injector: FaultInjector }> {
    const injector = this.injector(crash);
    return this.poll(this.commits, 10, injector, this.rawCommitter(injector));
  }

  /** One invocation of a handler the test built (say, over a lossy port) on the ingest queue. */
  pollIngestWith(
    handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
    batchSize = 10,
  ): Promise<PollResult> {
    return this.poll(this.ingest, batchSize, this.injector(), handler);
  }

  /**
   * Lambda's event source mapping: receive, invoke, delete what succeeded. A crashed invocation (its
   * ports dead, or it threw) deletes nothing: its messages come back after the visibility timeout.
   */
  private async poll(
    queue: SqsQueue,
    batchSize: number,
    injector: FaultInjector,
    handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
  ): Promise<PollResult & { injector: FaultInjector }> {
    const received = queue.receive(batchSize);
    if (received.length === 0) return { received: 0, failed: 0, crashed: false, injector };
    let response: SQSBatchResponse;
    try {
      response = await this.run(handler(sqsEvent(received, queue.name)));
      if (injector.dead) throw new Error('invocation crashed');
    } catch (error) {
      return { received: received.length, failed: received.length, crashed: true, error, injector };
    }
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const r of received) if (!failed.has(r.message.messageId)) queue.delete(r);
    return { received: received.length, failed: failed.size, crashed: false, injector };
  }

  sweep(olderThanMs = 0) {
    return this.run(
      sweepStale({ ...this.ports(this.worker('sweeper')), log: this.log, now: this.now }, olderThanMs),
    );
  }

  /** An upload to the landing bucket: its S3 event lands in the ingest queue. */
  async put(key: string, body = 'x'): Promise<void> {
    this.ingest.send(s3Notification({ bucket: this.landingBucket, key, size: body.length }));
  }

  /** Sends a raw event body to the ingest queue (duplicates, other shapes, bad input). */
  async sendEvent(body: string): Promise<void> {
    this.ingest.send(body);
  }

  /** PurgeQueue on the ingest queue: every message gone, in flight or not. */
  purgeIngest(): void {
    this.ingest.messages = [];
  }

  /** True when no table has a sealed-but-uncommitted batch or a reserved version. */
  async ledgerQuiet(): Promise<boolean> {
    return !(await commitsInFlight(this.ledger, this.config.tables));
  }

  /**
   * Drives both queues and the sweeper until nothing is left in flight anywhere; when only invisible
   * messages are left, simulated time jumps to the next one's return. Throws after `maxMs` simulated ms.
   */
  async runUntilQuiet(maxMs = 600_000): Promise<void> {
    const deadline = this.scheduler.now + maxMs;
    while (this.scheduler.now < deadline) {
      const ingest = await this.pollIngest();
      const commit = await this.pollCommit();
      if (ingest.received > 0 || commit.received > 0) continue;
      const waiting = [...this.ingest.messages, ...this.commits.messages];
      if (waiting.length > 0) {
        const next = Math.min(...waiting.map((m) => m.visibleAt));
        await this.advance(Math.max(next - this.scheduler.now, 10));
        continue;
      }
      if (await this.ledgerQuiet()) return;
      await this.sweep(0);
    }
    throw new Error(
      `pipeline not quiet after ${maxMs} simulated ms: ingest ${this.ingest.size}, commit ${this.commits.size}, ` +
        `ledger quiet ${await this.ledgerQuiet()}`,
    );
  }

  async manifests(table: string): Promise<Manifest[]> {
    const manifests: Manifest[] = [];
    for (const version of await this.store.listManifestVersions(table)) {
      const manifest = await this.store.getManifest(table, version);
      if (manifest) manifests.push(manifest);
    }
    return manifests;
  }

  verify(expected: readonly ExpectedFile[]): Promise<Verdict> {
    return verifyPipeline({
      config: this.config,
      ledger: this.ledger,
      manifests: (table) => this.manifests(table),
      expected,
      dlqDepth: async () => this.ingest.dlq.length + this.commits.dlq.length,
    });
  }

  /** Every method of `port` run to completion on the simulated clock. */
  private driven<T extends object>(port: T): T {
    return new Proxy(port, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => this.run(value.apply(target, args) as Promise<unknown>);
      },
    });
  }
}

export function sqsEvent(received: readonly Received[], queue: string): SQSEvent {
  return {
    Records: received.map(({ message, receipt }) =>
      sqsRecord({
        messageId: message.messageId,
        receiptHandle: String(receipt),
        body: message.body,
        queue,
        sentAt: message.sentAt,
        receiveCount: message.receiveCount,
        ...(message.group ? { group: message.group } : {}),
      }),
    ),
  };
}

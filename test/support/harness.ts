import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../../local/aws/clients.ts';
import { queueDepth } from '../../local/aws/queue-depth.ts';
import { type PollResult, pollOnce } from '../../local/poller.ts';
import type { CfnTemplate } from '../../local/synth.ts';
import {
  type PipelineConfig,
  type PipelineConfigInput,
  parsePipelineConfig,
} from '../../shared/config/pipeline-config.ts';
import { DynamoDbLedger } from '../../shared/ingestion/aws/dynamodb-ledger.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { SqsCommitQueue } from '../../shared/ingestion/aws/sqs-commit-queue.ts';
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
import type { AwsTarget } from '../../shared/kernel/aws/target.ts';
import type { Log } from '../../shared/kernel/log.ts';
import { MemoryMetrics } from '../../shared/kernel/metrics.ts';
import { testTarget } from './aws.ts';
import { type CrashPlan, FaultInjector } from './faults.ts';
import { type FunctionClients, functionClients } from './iam.ts';
import { countRequests, RequestCounter } from './request-counter.ts';
import { createPipelineResources, type PipelineResources, type ResourceOptions } from './resources.ts';
import { type ExpectedFile, type Verdict, verifyPipeline } from './verdict.ts';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly extra?: Record<string, unknown>;
}

export { CLEAN_VERDICT, type ExpectedFile, type Verdict } from './verdict.ts';

export interface HarnessOptions extends ResourceOptions {
  readonly config: PipelineConfigInput;
  /** Lambda BatchSize for the batcher. @default 10 */
  readonly batchSize?: number;
  /** Lambda MaximumBatchingWindow (required above 10 records). @default 5_000 when batchSize > 10, else 0 */
  readonly batchingWindowMs?: number;
  /** Install the request counter on `clients` (only once per client set). @default true */
  readonly countRequests?: boolean;
  /**
   * How each function's clients are built (they sign as the function's role, through the IAM check): the
   * fault tests' short backoff. @default createClients
   */
  readonly functionClients?: (target: AwsTarget) => AwsClients;
  /** More cdk context for the template whose roles the functions get (`inlet:tables` is the config's). */
  readonly iamContext?: Record<string, unknown>;
  /**
   * The tables of that template when they name buckets only known once the resources exist (a cleanSource
   * `moveTo` in the landing bucket). @default the config's tables
   */
  readonly templateTables?: (resources: PipelineResources) => PipelineConfigInput['tables'];
  /** A fixture: the template with a grant cut, whose denials the test expects and asserts itself. */
  readonly editTemplate?: (template: CfnTemplate) => CfnTemplate;
}

interface Ports {
  ledger: Ledger & LedgerQueries;
  store: BatchStore;
  commitQueue: CommitQueue;
  events: EventPublisher;
}

/** The functions the harness runs, each with the clients of its own role. */
export type HarnessFunction = 'Batcher' | 'Committer' | 'Sweeper';

/**
 * The whole pipeline on the emulator with the real handlers, driven invocation by invocation: the
 * integration tests' and the fault matrix's Lambda stand-in. Time for leases is real, plus `clockSkewMs`.
 */
export class PipelineHarness {
  readonly counter = new RequestCounter();
  readonly metrics = new MemoryMetrics();
  readonly logs: LogLine[] = [];
  readonly published: BatchCommittedEvent[] = [];
  clockSkewMs = 0;
  readonly now = () => Date.now() + this.clockSkewMs;
  readonly log: Log = {
    debug: (message, extra) => this.logs.push({ level: 'debug', message, extra }),
    info: (message, extra) => this.logs.push({ level: 'info', message, extra }),
    warn: (message, extra) => this.logs.push({ level: 'warn', message, extra }),
    error: (message, extra) => this.logs.push({ level: 'error', message, extra }),
  };
  /** The test's own ports (unchecked): what assertions read. */
  private readonly base: Ports;
  private readonly functionPorts = new Map<HarnessFunction, Ports>();

  private constructor(
    readonly clients: AwsClients,
    readonly resources: PipelineResources,
    readonly config: PipelineConfig,
    private readonly options: HarnessOptions,
    /** Each function's clients, signing as its role through the IAM check (absent on real AWS). */
    readonly roles: FunctionClients | undefined,
  ) {
    this.base = this.portsOf(clients);
  }

  private portsOf(clients: AwsClients): Ports {
    return {
      ledger: new DynamoDbLedger({ client: clients.dynamodb, tableName: this.resources.ledgerTable }),
      store: new S3BatchStore({ client: clients.s3, bucket: this.resources.manifestBucket }),
      commitQueue: new SqsCommitQueue({ client: clients.sqs, queueUrl: this.resources.commitQueue.url }),
      events: { batchCommitted: async (event) => void this.published.push(event) },
    };
  }

  /** The clients `fn` calls AWS with: its role's, through the IAM check (the test's own on real AWS). */
  clientsOf(fn: HarnessFunction | 'Backfill' | 'Sink'): AwsClients {
    return this.roles ? this.roles.of(fn) : this.clients;
  }

  /** With counting on, `clients` must be this harness's own: the request counter is installed on them. */
  static async create(clients: AwsClients, options: HarnessOptions): Promise<PipelineHarness> {
    const resources = await createPipelineResources(clients, options);
    const config = parsePipelineConfig(options.config);
    const roles = await functionClients({
      label: `harness ${resources.ledgerTable}`,
      context: {
        'inlet:tables': options.templateTables?.(resources) ?? options.config.tables,
        ...options.iamContext,
      },
      resources,
      target: testTarget,
      ...(options.functionClients ? { make: options.functionClients } : {}),
      ...(options.editTemplate ? { edit: options.editTemplate } : {}),
    });
    const harness = new PipelineHarness(clients, resources, config, options, roles);
    if (options.countRequests ?? true) {
      const sets = [
        clients,
        ...(['Batcher', 'Committer', 'Sweeper'] as const).map((f) => harness.clientsOf(f)),
      ];
      for (const set of new Set(sets)) {
        countRequests(set.dynamodb, 'dynamodb', harness.counter);
        countRequests(set.s3, 's3', harness.counter);
        countRequests(set.sqs, 'sqs', harness.counter);
      }
    }
    return harness;
  }

  get landingBucket(): string {
    return this.resources.landingBucket;
  }

  get ledger(): Ledger & LedgerQueries {
    return this.base.ledger;
  }

  get store(): BatchStore {
    return this.base.store;
  }

  /** `fn`'s ports, on its role's clients; with an injector, each may crash where the plan says. */
  ports(fn: HarnessFunction, injector?: FaultInjector): Ports {
    let own = this.functionPorts.get(fn);
    if (!own) {
      own = this.roles ? this.portsOf(this.roles.of(fn)) : this.base;
      this.functionPorts.set(fn, own);
    }
    if (!injector) return own;
    return {
      ledger: injector.wrap('ledger', own.ledger),
      store: injector.wrap('store', own.store),
      commitQueue: injector.wrap('commitQueue', own.commitQueue),
      events: injector.wrap('events', own.events),
    };
  }

  batcher(injector?: FaultInjector): (event: SQSEvent) => Promise<SQSBatchResponse> {
    return makeBatcherHandler({
      ...this.ports('Batcher', injector),
      config: this.config,
      log: this.log,
      metrics: this.metrics,
      now: this.now,
    });
  }

  committer(injector?: FaultInjector): (event: SQSEvent) => Promise<SQSBatchResponse> {
    return makeCommitterHandler({
      ...this.ports('Committer', injector),
      log: this.log,
      metrics: this.metrics,
      now: this.now,
    });
  }

  /** One batcher invocation; with `crash`, the invocation dies at that point. */
  pollIngest(
    crash?: CrashPlan,
    batchSize = this.options.batchSize ?? 10,
  ): Promise<PollResult & { injector: FaultInjector }> {
    const batchingWindowMs = this.options.batchingWindowMs ?? (batchSize > 10 ? 5_000 : 0);
    return this.invoke('Batcher', crash, (injector) => this.batcher(injector), {
      queueUrl: this.resources.ingestQueue.url,
      batchSize,
      batchingWindowMs,
    });
  }

  /** One committer invocation (Lambda on a FIFO queue takes up to 10). */
  pollCommit(crash?: CrashPlan): Promise<PollResult & { injector: FaultInjector }> {
    return this.invoke('Committer', crash, (injector) => this.committer(injector), {
      queueUrl: this.resources.commitQueue.url,
      batchSize: 10,
    });
  }

  /** An invocation whose ports may crash: once they have, its response is discarded, as with a dead Lambda. */
  private async invoke(
    fn: HarnessFunction,
    crash: CrashPlan | undefined,
    makeHandler: (injector: FaultInjector) => (event: SQSEvent) => Promise<SQSBatchResponse>,
    source: { queueUrl: string; batchSize: number; batchingWindowMs?: number },
  ): Promise<PollResult & { injector: FaultInjector }> {
    const injector = new FaultInjector(crash);
    const handler = makeHandler(injector);
    // Lambda's event source mapping polls with the function's execution role.
    const result = await pollOnce({ client: this.clientsOf(fn).sqs, ...source }, async (event) => {
      const response = await handler(event);
      if (injector.dead) throw new Error('invocation crashed');
      return response;
    });
    return { ...result, injector };
  }

  sweep(olderThanMs = 0) {
    const { ledger, commitQueue } = this.ports('Sweeper');
    return sweepStale(
      {
        ledger,
        commitQueue,
        log: this.log,
        now: this.now,
      },
      olderThanMs,
    );
  }

  /** Uploads to the landing bucket; the emulator sends the S3 event to the ingest queue. */
  async put(key: string, body = 'x'): Promise<void> {
    await this.clients.s3.send(
      new PutObjectCommand({ Bucket: this.resources.landingBucket, Key: key, Body: body }),
    );
  }

  /** Sends a raw event body to the ingest queue (duplicates, other shapes, bad input). */
  async sendEvent(body: string): Promise<void> {
    await this.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: this.resources.ingestQueue.url, MessageBody: body }),
    );
  }

  async queueDepth(url: string): Promise<number> {
    const { visible, inFlight } = await queueDepth(this.clients.sqs, url);
    return visible + inFlight;
  }

  /** True when no table has a sealed-but-uncommitted batch or a reserved version. */
  async ledgerQuiet(): Promise<boolean> {
    return !(await commitsInFlight(this.base.ledger, this.config.tables));
  }

  /**
   * Drives both queues (and the sweeper, as its schedule would) until nothing is left in flight anywhere,
   * the `Trigger.AvailableNow` of the tests. Throws if that takes longer than `maxMs`.
   */
  async runUntilQuiet(maxMs = 60_000): Promise<void> {
    const deadline = Date.now() + maxMs;
    while (Date.now() < deadline) {
      const ingest = await this.pollIngest();
      const commit = await this.pollCommit();
      if (ingest.received > 0 || commit.received > 0) continue;
      const depth =
        (await this.queueDepth(this.resources.ingestQueue.url)) +
        (await this.queueDepth(this.resources.commitQueue.url));
      if (depth > 0) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        continue;
      }
      if (await this.ledgerQuiet()) return;
      await this.sweep(0);
    }
    throw new Error(`pipeline not quiet after ${maxMs} ms`);
  }

  async manifests(table: string): Promise<Manifest[]> {
    const versions = await this.base.store.listManifestVersions(table);
    const manifests: Manifest[] = [];
    for (const version of versions) {
      const manifest = await this.base.store.getManifest(table, version);
      if (manifest) manifests.push(manifest);
    }
    return manifests;
  }

  /** Checks I1 (exactly once), I2 (nothing lost) and I3 (contiguous versions, heads agree). */
  async verify(expected: readonly ExpectedFile[]): Promise<Verdict> {
    return verifyPipeline({
      config: this.config,
      ledger: this.base.ledger,
      manifests: (table) => this.manifests(table),
      expected,
      dlqDepth: async () =>
        (await this.queueDepth(this.resources.ingestDlq.url)) +
        (await this.queueDepth(this.resources.commitDlq.url)),
    });
  }
}

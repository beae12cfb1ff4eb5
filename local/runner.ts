import { appendFileSync } from 'node:fs';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../shared/aws/clients.ts';
import { queueDepth } from '../shared/aws/queues.ts';
import {
  batcherRuntimeFromEnv,
  committerRuntimeFromEnv,
  sweeperRuntimeFromEnv,
} from '../shared/aws/runtime.ts';
import { clientConfig, targetFromEnv } from '../shared/aws/target.ts';
import { DynamoDbSinkCursorStore } from '../shared/bronze/dynamodb-sink-cursor.ts';
import { sinkRuntimeFromEnv } from '../shared/bronze/runtime.ts';
import { makeBatcherHandler } from '../shared/handlers/batcher-handler.ts';
import { makeCommitterHandler } from '../shared/handlers/committer-handler.ts';
import { DynamoDbLedger } from '../shared/ledger/dynamodb-ledger.ts';
import type { Log } from '../shared/log.ts';
import { MemoryMetrics } from '../shared/metrics.ts';
import { OUTPUTS, SERVICE } from '../shared/names.ts';
import { S3BatchStore } from '../shared/storage/s3-batch-store.ts';
import { SinkTable } from '../shared/usecases/sink.ts';
import { commitsInFlight, sweepStale } from '../shared/usecases/sweep.ts';
import { functionEnv, type IamAccess } from './iam/client.ts';
import type { FunctionName, LocalStack } from './local-stack.ts';
import { pollOnce } from './poller.ts';

export interface RunnerOptions {
  readonly clients: AwsClients;
  readonly stack: LocalStack;
  readonly endpoint: string;
  readonly region: string;
  /** JSON lines of the handlers' logs. */
  readonly logFile?: string;
  /**
   * How often `untilQuiet` checks (it wants two quiet checks in a row). Tests that wait for a few files
   * at a time check more often; a terminal watching a drain needs no more than two a second. @default 500
   */
  readonly quietCheckMs?: number;
  /**
   * The IAM check: each function calls AWS through this proxy with its role's credentials (by function
   * name, as registered). Without it the functions call the emulator directly with the fixed test key.
   */
  readonly iam?: IamAccess;
}

export interface QueueDepths {
  readonly ingest: number;
  readonly ingestDlq: number;
  readonly commit: number;
  readonly commitDlq: number;
}

/** JSON lines of a service's logs (the handlers', local mode's own) in `path`, if given. */
export function fileLog(path: string | undefined, service: string): Log {
  const write = (level: string) => (message: string, extra?: Record<string, unknown>) => {
    if (path)
      appendFileSync(
        path,
        `${JSON.stringify({ level, service, timestamp: new Date().toISOString(), message, ...extra })}\n`,
      );
  };
  return { debug: () => {}, info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}

/**
 * Lambda's SQS event source mappings and the sweeper's schedule, on this machine: the real handlers built
 * the way the Lambda entrypoints build them, from each function's environment in the template.
 */
export class LocalRunner {
  readonly metrics = new MemoryMetrics();
  invocations = 0;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly runtimes;
  /** The bronze sink, when a table has `bronze`: run in a loop here instead of from its FIFO queue. */
  readonly sink:
    | {
        readonly table: SinkTable;
        readonly runtime: ReturnType<typeof sinkRuntimeFromEnv>;
        readonly tables: string[];
      }
    | undefined;

  /** What local mode itself reads (status, summary, quiet checks): the operator's view, not a function's. */
  private readonly operator;
  /** Each event source mapping polls its queue with the function's role, as Lambda's does. */
  private readonly pollers = new Map<FunctionName, SQSClient>();

  constructor(private readonly options: RunnerOptions) {
    const env = (name: FunctionName | 'Sink') =>
      functionEnv(
        {
          ...(options.stack.environment[name] ?? options.stack.environment.Committer),
          INLET_AWS_ENDPOINT: options.endpoint,
          AWS_REGION: options.region,
        },
        options.iam?.endpoint ?? options.endpoint,
        options.iam?.credentials[name],
      );
    for (const name of ['Batcher', 'Committer'] as const) {
      const target = targetFromEnv(env(name));
      this.pollers.set(name, target ? new SQSClient(clientConfig(target)) : options.clients.sqs);
    }
    const committer = options.stack.environment.Committer;
    this.operator = {
      ledger: new DynamoDbLedger({
        client: options.clients.dynamodb,
        tableName: committer.INLET_LEDGER_TABLE ?? '',
      }),
      store: new S3BatchStore({ client: options.clients.s3, bucket: committer.INLET_MANIFEST_BUCKET ?? '' }),
    };
    const overrides = (service: string) => ({
      log: fileLog(options.logFile, service),
      metrics: this.metrics,
    });
    this.runtimes = {
      batcher: batcherRuntimeFromEnv(SERVICE.batcher, env('Batcher'), overrides(SERVICE.batcher)),
      committer: committerRuntimeFromEnv(SERVICE.committer, env('Committer'), overrides(SERVICE.committer)),
      sweeper: sweeperRuntimeFromEnv(SERVICE.sweeper, env('Sweeper'), overrides(SERVICE.sweeper)),
    };
    // The sink's own environment and role (a stack without a bronze table has no sink function).
    const sinkRuntime = sinkRuntimeFromEnv(env('Sink'), {
      log: fileLog(options.logFile, SERVICE.sink),
      nudger: { nudge: async () => {} },
    });
    const bronzeTables = sinkRuntime.config.tables.filter((t) => t.bronze).map((t) => t.name);
    this.sink =
      bronzeTables.length > 0
        ? { table: new SinkTable(sinkRuntime), runtime: sinkRuntime, tables: bronzeTables }
        : undefined;
  }

  /** Each bronze table caught up with its committed versions, like the sink's queue would drive it. */
  private async sinkLoop(): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    while (!this.stopping) {
      for (const table of sink.tables) {
        try {
          await sink.table.catchUp(table, Date.now() + 60_000);
        } catch (error) {
          fileLog(this.options.logFile, 'local-runner').error('bronze sink failed; retrying', {
            table,
            error: String(error),
          });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /** Every bronze table's Delta version is its manifest head - 1. */
  async sinksCaughtUp(): Promise<boolean> {
    const sink = this.sink;
    if (!sink) return true;
    for (const table of sink.tables) {
      const head = (await this.operator.ledger.getTable(table)).head;
      if ((await this.sinkCursors().get(table)).deltaVersion !== head - 1) return false;
    }
    return true;
  }

  private async pollLoop(name: 'Batcher' | 'Committer'): Promise<void> {
    const source = this.options.stack.eventSources[name];
    if (!source) throw new Error(`no event source for ${name} in the template`);
    const handler =
      name === 'Batcher'
        ? makeBatcherHandler(this.runtimes.batcher)
        : makeCommitterHandler(this.runtimes.committer);
    while (!this.stopping) {
      try {
        const result = await pollOnce(
          {
            client: this.pollers.get(name) ?? this.options.clients.sqs,
            queueUrl: source.queueUrl,
            queueArn: source.queueArn,
            batchSize: source.batchSize,
            batchingWindowMs: source.batchingWindowMs,
            waitSeconds: 1,
          },
          handler,
        );
        if (result.received > 0) this.invocations += 1;
        if (result.crashed) {
          fileLog(this.options.logFile, 'local-runner').error(
            'invocation failed; its messages return after the visibility timeout',
            {
              function: name,
              error:
                result.error instanceof Error
                  ? (result.error.stack ?? result.error.message)
                  : String(result.error),
            },
          );
        }
      } catch (error) {
        fileLog(this.options.logFile, 'local-runner').error('poll failed', {
          function: name,
          error: String(error),
        });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async sweepLoop(): Promise<void> {
    const staleMs = Number(this.options.stack.environment.Sweeper.INLET_STALE_AFTER_SECONDS ?? 300) * 1000;
    let last = Date.now();
    while (!this.stopping) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (Date.now() - last >= staleMs) {
        last = Date.now();
        await this.sweep(staleMs).catch(() => undefined);
      }
    }
  }

  sweep(olderThanMs: number) {
    return sweepStale(this.runtimes.sweeper, olderThanMs);
  }

  start(): void {
    this.stopping = false;
    this.loops = [this.pollLoop('Batcher'), this.pollLoop('Committer'), this.sweepLoop(), this.sinkLoop()];
  }

  /** Lets the invocations in flight finish, like a Lambda draining, then returns. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  async depths(): Promise<QueueDepths> {
    const depth = async (url: string | undefined) => {
      if (!url) return 0;
      const { visible, inFlight } = await queueDepth(this.options.clients.sqs, url);
      return visible + inFlight;
    };
    const o = this.options.stack.outputs;
    return {
      ingest: await depth(o[OUTPUTS.ingestQueueUrl]),
      ingestDlq: await depth(o[OUTPUTS.ingestDlqUrl]),
      commit: await depth(o[OUTPUTS.commitQueueUrl]),
      commitDlq: await depth(o[OUTPUTS.commitDlqUrl]),
    };
  }

  /** Nothing queued or in flight, and no batch sealed or version reserved but not committed. */
  async quiet(): Promise<boolean> {
    const d = await this.depths();
    if (d.ingest > 0 || d.commit > 0) return false;
    if (await commitsInFlight(this.operator.ledger, this.options.stack.tables)) return false;
    return this.sinksCaughtUp();
  }

  /** `Trigger.AvailableNow`: process until quiet twice in a row, re-requesting stalled commits when idle. */
  async untilQuiet(onTick?: () => Promise<void> | void, timeoutMs = 10 * 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quietChecks = 0;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, this.options.quietCheckMs ?? 500));
      await onTick?.();
      if (await this.quiet()) {
        quietChecks += 1;
        if (quietChecks >= 2) return;
      } else {
        quietChecks = 0;
        const d = await this.depths();
        if (d.ingest === 0 && d.commit === 0) await this.sweep(0);
      }
    }
    throw new Error(`still not quiet after ${Math.round(timeoutMs / 1000)} s`);
  }

  get ledger() {
    return this.operator.ledger;
  }

  get store() {
    return this.operator.store;
  }

  /** The sink's cursors as the operator reads them (`inlet status`, the summary), not as the sink. */
  sinkCursors() {
    return new DynamoDbSinkCursorStore({
      client: this.options.clients.dynamodb,
      tableName: this.options.stack.environment.Committer.INLET_LEDGER_TABLE ?? '',
    });
  }
}

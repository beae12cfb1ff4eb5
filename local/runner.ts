import { appendFileSync } from 'node:fs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDbSinkCursorStore } from '../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { configFromEnv } from '../shared/config/pipeline-config.ts';
import { DynamoDbLedger } from '../shared/ingestion/aws/dynamodb-ledger.ts';
import { S3BatchStore } from '../shared/ingestion/aws/s3-batch-store.ts';
import { commitsInFlight } from '../shared/ingestion/sweep.ts';
import { clientConfig, emulatorTarget } from '../shared/kernel/aws/target.ts';
import type { Log } from '../shared/kernel/log.ts';
import { OUTPUTS } from '../shared/kernel/names.ts';
import type { AwsClients } from './aws/clients.ts';
import { queueDepth } from './aws/queue-depth.ts';
import { HeldMessages } from './held-messages.ts';
import type { IamAccess } from './iam/client.ts';
import { type AccessPolicy, functionAccess } from './lambda/access.ts';
import { LambdaHost } from './lambda/host.ts';
import { type LambdaRuntime, nodeFor } from './lambda/install.ts';
import {
  type FunctionErrorDocument,
  LambdaFunctionError,
  type LambdaInvokeResult,
} from './lambda-invoker.ts';
import type { EventSourceSettings, LocalStack, ScheduleSettings } from './local-stack.ts';
import { pollOnce } from './poller.ts';
import { sinksCaughtUp } from './sinks-caught-up.ts';

export interface RunnerOptions {
  readonly clients: AwsClients;
  readonly stack: LocalStack;
  /** What the functions run under: `await ensureLambdaRuntime()` (local/lambda/install.ts). */
  readonly runtime: LambdaRuntime;
  readonly endpoint: string;
  readonly region: string;
  /** Every line the functions write (their logs), each after its function's logical id. */
  readonly logFile?: string;
  /**
   * The IAM check: each function process calls AWS through this proxy with its role's credentials, and each
   * event source mapping polls as its function's role. Without it, straight to `endpoint` with the test key.
   */
  readonly iam?: IamAccess;
  /** Where each function process's calls go, as whom. @default through `iam` if given (functionAccess) */
  readonly access?: AccessPolicy;
  /**
   * How often `untilQuiet` checks (it wants two quiet checks in a row). Tests that wait for a few files
   * at a time check more often; a terminal watching a drain needs no more than two a second. @default 500
   */
  readonly quietCheckMs?: number;
  /**
   * Where the mappings record the batches they hold (local/held-messages.ts), so the next run can give back
   * what this one held if it is killed. Without it, a killed run's batches wait out their visibility timeout.
   */
  readonly heldMessagesFile?: string;
}

export interface QueueDepths {
  readonly ingest: number;
  readonly ingestDlq: number;
  readonly commit: number;
  readonly commitDlq: number;
}

/** An invocation that failed, as the event source or schedule that made it saw it. */
export interface FailedInvocation {
  readonly functionLogicalId: string;
  readonly error: FunctionErrorDocument;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Local mode's own log (the runner, local Step Functions) in `path`, if given: `[service] {json}` lines,
 * beside the functions' `[logicalId] line` ones.
 */
export function fileLog(path: string | undefined, service: string): Log {
  const write = (level: string) => (message: string, extra?: Record<string, unknown>) => {
    if (path)
      appendFileSync(
        path,
        `[${service}] ${JSON.stringify({ level, timestamp: new Date().toISOString(), message, ...extra })}\n`,
      );
  };
  return { debug: () => {}, info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}

/** What EventBridge sends a scheduled rule's target. */
function scheduledEvent(): Record<string, unknown> {
  return {
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    resources: [],
    detail: {},
  };
}

/**
 * What Lambda's SQS event source mappings and EventBridge's schedules do for the deployed stack, on this
 * machine: each mapping of the template polls its queue with the template's settings and invokes its
 * function, each schedule invokes its function at its rate; every invocation runs the function's bundle in a
 * process of its own under the Lambda Runtime API (local/lambda/host.ts). Nothing here runs product code:
 * the ledger, manifests and sink cursors are read through their adapters, to tell when all is done.
 */
export class LocalRunner {
  readonly host: LambdaHost;
  invocations = 0;
  /** The last invocations that failed (100 at most). */
  readonly failures: FailedInvocation[] = [];
  readonly ledger: DynamoDbLedger;
  readonly store: S3BatchStore;
  /** The bronze tables and their sink cursors, when a table has a Delta sink. */
  readonly bronze: { readonly tables: string[]; readonly cursors: DynamoDbSinkCursorStore } | undefined;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private lastEarlySweep = 0;
  /** Each event source mapping polls its queue with its function's role, as Lambda's does. */
  private readonly pollers = new Map<string, SQSClient>();
  private readonly log: Log;
  private readonly held: HeldMessages;

  constructor(private readonly options: RunnerOptions) {
    const { clients, stack, runtime } = options;
    this.log = fileLog(options.logFile, 'local-runner');
    this.held = new HeldMessages(options.heldMessagesFile);
    // Every function a mapping or a schedule invokes has a Node.js here, or local mode stops at start-up with
    // what it has (one a custom resource provider uses, never invoked locally, is not asked for).
    const invoked = new Set([...stack.eventSources, ...stack.schedules].map((s) => s.functionLogicalId));
    for (const fn of stack.functions)
      if (invoked.has(fn.logicalId) && fn.runtime) nodeFor(runtime, fn.runtime);
    this.host = new LambdaHost({
      lambda: clients.lambda,
      functions: stack.functions,
      runtime,
      region: options.region,
      access: options.access ?? functionAccess(options.endpoint, options.iam),
      onLog: (id, line) => {
        if (options.logFile) appendFileSync(options.logFile, `[${id}] ${line}\n`);
      },
    });
    const { iam } = options;
    if (iam) {
      const roleOf = new Map(stack.functions.map((f) => [f.logicalId, f.role]));
      for (const { functionLogicalId: id } of stack.eventSources) {
        const role = roleOf.get(id) ?? '';
        const credentials = iam.credentials[role];
        if (!credentials) throw new Error(`the IAM check has no role ${role} for the mapping of ${id}`);
        this.pollers.set(
          id,
          new SQSClient(clientConfig(emulatorTarget(iam.endpoint, options.region, credentials))),
        );
      }
    }
    const tableName = stack.outputs[OUTPUTS.ledgerTable] ?? '';
    this.ledger = new DynamoDbLedger({ client: clients.dynamodb, tableName });
    this.store = new S3BatchStore({
      client: clients.s3,
      bucket: stack.outputs[OUTPUTS.manifestBucket] ?? '',
    });
    const bronzeTables = configFromEnv(stack.environment.Committer)
      .tables.filter((t) => t.bronze)
      .map((t) => t.name);
    this.bronze =
      bronzeTables.length > 0
        ? {
            tables: bronzeTables,
            cursors: new DynamoDbSinkCursorStore({ client: clients.dynamodb, tableName }),
          }
        : undefined;
  }

  /** The functions' metrics, from their EMF log lines. */
  get metrics() {
    return this.host.metrics;
  }

  private failed(functionLogicalId: string, error: unknown): void {
    const reported =
      error instanceof LambdaFunctionError
        ? error.document
        : { errorType: 'Local.Error', errorMessage: error instanceof Error ? error.message : String(error) };
    this.failures.push({ functionLogicalId, error: reported });
    if (this.failures.length > 100) this.failures.shift();
  }

  /** Every bronze table holds its manifest head wholly (local/sinks-caught-up.ts). */
  async sinksCaughtUp(): Promise<boolean> {
    const { bronze } = this;
    if (!bronze) return true;
    return sinksCaughtUp(bronze.tables, async (t) => (await this.ledger.getTable(t)).head, bronze.cursors);
  }

  /** Lambda's SQS event source mapping: one poller (FIFO groups stay in order), the template's settings. */
  private async pollLoop(source: EventSourceSettings): Promise<void> {
    const fn = source.functionLogicalId;
    while (!this.stopping) {
      try {
        const result = await pollOnce(
          {
            client: this.pollers.get(fn) ?? this.options.clients.sqs,
            queueUrl: source.queueUrl,
            queueArn: source.queueArn,
            batchSize: source.batchSize,
            batchingWindowMs: source.batchingWindowMs,
            waitSeconds: 1,
            held: this.held,
          },
          async (event) => {
            const invocation = await this.host.invoke(fn, event);
            if (invocation.functionError)
              throw new LambdaFunctionError(invocation.payload as FunctionErrorDocument);
            // Without ReportBatchItemFailures, Lambda takes any successful response as the whole batch done.
            return source.reportBatchItemFailures ? (invocation.payload as never) : undefined;
          },
        );
        if (result.received > 0) this.invocations += 1;
        if (result.crashed) {
          this.failed(fn, result.error);
          this.log.error('invocation failed; its messages return after the visibility timeout', {
            function: fn,
            error: result.error instanceof Error ? result.error.message : String(result.error),
          });
        }
      } catch (error) {
        this.log.error('poll failed', { function: fn, error: String(error) });
        await sleep(1_000);
      }
    }
  }

  /**
   * One scheduled invocation, retried as the rule's target retry policy says; the target's input when it has
   * one, else EventBridge's scheduled event. Resolves when it succeeded or its retries are spent (each failure
   * is in `failures`).
   */
  async fire(schedule: ScheduleSettings): Promise<void> {
    for (let attempt = 0; attempt <= schedule.retryAttempts && !this.stopping; attempt++) {
      const event = schedule.input ?? scheduledEvent();
      const invocation = await this.host.invoke(schedule.functionLogicalId, event).catch(
        (error: Error): LambdaInvokeResult => ({
          payload: { errorType: 'Local.Error', errorMessage: error.message },
          functionError: 'Unhandled',
        }),
      );
      if (!invocation.functionError) return;
      this.failed(
        schedule.functionLogicalId,
        new LambdaFunctionError(invocation.payload as FunctionErrorDocument),
      );
      this.log.error('scheduled invocation failed', {
        function: schedule.functionLogicalId,
        error: invocation.payload,
      });
      await sleep(1_000);
    }
  }

  private async scheduleLoop(schedule: ScheduleSettings): Promise<void> {
    let last = Date.now();
    while (!this.stopping) {
      await sleep(500);
      if (Date.now() - last < schedule.everyMs) continue;
      last = Date.now();
      await this.fire(schedule);
    }
  }

  /**
   * Brings the sweeper's next firing forward (it re-requests what it finds stalled for longer than its
   * threshold, the template's sweep interval): what `untilQuiet` does when only the sweeper can help. Only the
   * schedules that send EventBridge's own event (the sweeper's): a table's maintenance (its own input) keeps
   * its rate, it never makes the pipeline quiet.
   */
  async fireSchedulesNow(): Promise<void> {
    if (Date.now() - this.lastEarlySweep < 5_000) return;
    this.lastEarlySweep = Date.now();
    await Promise.all(
      this.options.stack.schedules.filter((s) => s.input === undefined).map((s) => this.fire(s)),
    );
  }

  /**
   * Before `start`: makes visible again the messages a previous run on this state held when it was killed
   * (its mappings died with it, which Lambda's never do). Returns how many it gave back.
   */
  async giveBackLeftovers(): Promise<number> {
    if (this.loops.length > 0) throw new Error('giveBackLeftovers must run before the mappings start');
    const given = await this.held.giveBackLeftovers(this.options.clients.sqs);
    if (given > 0) this.log.info('gave back the messages a killed run held', { messages: given });
    return given;
  }

  start(): void {
    this.stopping = false;
    this.loops = [
      ...this.options.stack.eventSources.map((source) => this.pollLoop(source)),
      ...this.options.stack.schedules.map((schedule) => this.scheduleLoop(schedule)),
    ];
  }

  /** Lets the invocations in flight finish, like a Lambda draining, then stops the functions' processes. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    await this.host.stop();
    for (const poller of this.pollers.values()) poller.destroy();
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

  /** Every queue a mapping polls, waiting and in flight. */
  private async polledDepth(): Promise<number> {
    let total = 0;
    for (const { queueUrl } of this.options.stack.eventSources) {
      const { visible, inFlight } = await queueDepth(this.options.clients.sqs, queueUrl);
      total += visible + inFlight;
    }
    return total;
  }

  /** Nothing queued or in flight, and no batch sealed or version reserved but not committed. */
  async quiet(): Promise<boolean> {
    if ((await this.polledDepth()) > 0) return false;
    if (await commitsInFlight(this.ledger, this.options.stack.tables)) return false;
    return this.sinksCaughtUp();
  }

  /** `Trigger.AvailableNow`: process until quiet twice in a row, bringing the sweeper forward when idle. */
  async untilQuiet(onTick?: () => Promise<void> | void, timeoutMs = 10 * 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quietChecks = 0;
    while (Date.now() < deadline) {
      await sleep(this.options.quietCheckMs ?? 500);
      await onTick?.();
      if (await this.quiet()) {
        quietChecks += 1;
        if (quietChecks >= 2) return;
      } else {
        quietChecks = 0;
        if ((await this.polledDepth()) === 0) await this.fireSchedulesNow();
      }
    }
    throw new Error(`still not quiet after ${Math.round(timeoutMs / 1000)} s`);
  }
}

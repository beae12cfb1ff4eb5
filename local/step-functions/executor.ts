import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DescribeStateMachineCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { type Log, silentLog } from '../../shared/kernel/log.ts';
import type { AwsClients } from '../aws/clients.ts';
import type { IamAccess } from '../iam/client.ts';
import type { LambdaInvoker } from '../lambda-invoker.ts';
import { stackResources } from '../stack-resources.ts';
import { type ClaimedExecution, ExecutionsApi, type Owner } from './executions-api.ts';
import type { Definition, HistoryEventInput } from './history.ts';
import { type Outcome, runExecution, type TaskCalls } from './interpreter.ts';
import { StateMachineRole } from './task-role.ts';

export interface StepFunctionsExecutorOptions {
  readonly clients: AwsClients;
  /** The emulator: its Step Functions API and the launcher's executions API. */
  readonly endpoint: string;
  readonly region: string;
  /** The stack whose state machines this executor runs, and whose functions their tasks invoke. */
  readonly stackName: string;
  readonly invoker: LambdaInvoker;
  /** How often new executions are looked for and stops noticed. @default 500 */
  readonly pollMs?: number;
  /** Overrides every Retry interval (ms): tests keep backoff short. */
  readonly retryIntervalMs?: number;
  /** The IAM check: a task's own calls (Invoke, StartExecution) are authorized against the machine's role. */
  readonly iam?: IamAccess;
  readonly log?: Log;
}

/** The error an execution fails with when local mode stopped while it ran; it is never run a second time. */
export const LOCAL_MODE_STOPPED = 'Inlet.LocalModeStopped';
const STOPPED_CAUSE =
  'local mode stopped while this execution ran; an execution runs at most once, so start a new one for what it had left (for a backfill, `inlet backfill status` prints where it stopped and how to resume)';

interface Running {
  readonly abort: () => void;
  /** Set by stop(): the execution is failed as interrupted rather than left ABORTED. */
  interrupted: boolean;
  /** No longer this executor's (stopped with StopExecution, or taken over): record nothing more. */
  lost: boolean;
  done: Promise<void>;
}

/**
 * Step Functions' execution engine, for local mode: every execution of the stack's state machines that is
 * RUNNING in the emulator (started by anyone: the AWS CLI, an SDK, EventBridge, another execution, `inlet
 * backfill start`) is claimed and run in the ASL interpreter with the definition as deployed (read back from
 * the emulator each time), its history and end recorded on the emulator's execution, so DescribeExecution,
 * ListExecutions and GetExecutionHistory report it as AWS would. StopExecution stops it.
 */
export class StepFunctionsExecutor {
  private readonly api: ExecutionsApi;
  private readonly owner: Owner = { id: `${hostname()}:${process.pid}:${randomUUID()}`, pid: process.pid };
  private readonly running = new Map<string, Running>();
  private stateMachineArns: string[] = [];
  private functions = new Map<string, string>();
  private loop?: Promise<void>;
  private stopping = false;
  private idleWaiters: Array<() => void> = [];
  private readonly log: Log;
  private readonly role: StateMachineRole;

  constructor(private readonly options: StepFunctionsExecutorOptions) {
    this.api = new ExecutionsApi(options.endpoint);
    this.log = options.log ?? silentLog;
    this.role = new StateMachineRole(options.iam);
  }

  /** Finds the stack's state machines and functions, claims what is waiting, then keeps looking. */
  async start(): Promise<void> {
    const resources = await stackResources(this.options.clients, this.options.stackName);
    this.stateMachineArns = resources
      .filter((r) => r.type === 'AWS::StepFunctions::StateMachine')
      .map((r) => r.physicalId);
    // Definitions name functions by ARN or name; the invoker knows them by logical ID.
    this.functions = new Map(
      resources.filter((r) => r.type === 'AWS::Lambda::Function').map((r) => [r.physicalId, r.logicalId]),
    );
    this.stopping = false;
    await this.poll();
    this.loop = this.pollLoop();
  }

  /** True while an execution runs here. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** Resolves when no execution runs here. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops looking for executions; those running here are stopped and failed as interrupted (they are never
   * run again), then the claim is released.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    for (const run of this.running.values()) {
      run.interrupted = true;
      run.abort();
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.api.release(this.owner).catch(() => undefined);
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopping) {
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? 500));
      if (this.stopping) return;
      try {
        await this.poll();
      } catch (error) {
        this.log.error('local Step Functions: claiming executions failed; retrying', {
          error: String(error),
        });
      }
    }
  }

  private async poll(): Promise<void> {
    if (this.stateMachineArns.length === 0) return;
    const { claimed, stopped } = await this.api.claim(this.owner, this.stateMachineArns, [
      ...this.running.keys(),
    ]);
    for (const arn of stopped) {
      const run = this.running.get(arn);
      if (!run) continue;
      run.lost = true;
      run.abort();
    }
    for (const execution of claimed) {
      if (execution.interruptedOwner) await this.failInterrupted(execution);
      else this.run(execution);
    }
  }

  /** Claimed from an executor that is gone: it ran (partly) there, and is not run a second time. */
  private async failInterrupted(execution: ClaimedExecution): Promise<void> {
    const stopDate = Date.now();
    const cause = STOPPED_CAUSE;
    await this.api.record(
      this.owner,
      execution.executionArn,
      [
        {
          type: 'ExecutionFailed',
          timestamp: stopDate,
          executionFailedEventDetails: { error: LOCAL_MODE_STOPPED, cause },
        },
      ],
      { status: 'FAILED', error: LOCAL_MODE_STOPPED, cause, stopDate },
    );
  }

  private run(execution: ClaimedExecution): void {
    const pending: HistoryEventInput[] = [];
    let flushing = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    let abort: () => void = () => {};
    const entry: Running = {
      abort: () => abort(),
      interrupted: false,
      lost: false,
      done: Promise.resolve(),
    };
    this.running.set(execution.executionArn, entry);
    // Events go to the emulator in order, a batch at a time (a few a second), the last with the end.
    const flush = (close?: Outcome) => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const events = pending.splice(0);
      // A batch that could not be recorded is logged (recordFailed); the next one still goes.
      flushing = flushing
        .catch(() => {})
        .then(async () => {
          if (entry.lost || (events.length === 0 && !close)) return;
          const { accepted } = await this.api.record(this.owner, execution.executionArn, events, close);
          if (!accepted && !entry.lost) {
            entry.lost = true;
            abort();
          }
        });
      return flushing;
    };
    const onEvent = (event: HistoryEventInput) => {
      pending.push(event);
      timer ??= setTimeout(() => void flush().catch((e) => this.recordFailed(execution, e)), 200);
    };
    entry.done = (async () => {
      let outcome: Outcome;
      try {
        const definition = await this.definition(execution.stateMachineArn);
        const started = runExecution(
          definition,
          {
            executionArn: execution.executionArn,
            name: execution.name,
            stateMachineArn: execution.stateMachineArn,
            input: execution.input,
            startTime: new Date(execution.startDate),
            roleArn: execution.roleArn,
          },
          this.taskCalls(execution.stateMachineArn),
          onEvent,
          {
            region: this.options.region,
            ...(this.options.retryIntervalMs !== undefined
              ? { retryIntervalMs: this.options.retryIntervalMs }
              : {}),
          },
        );
        abort = started.abort;
        if (entry.interrupted || entry.lost) abort();
        outcome = await started.outcome;
      } catch (error) {
        // The definition could not be read or run (an invalid one, a task type local mode lacks).
        const cause = (error as Error).message ?? String(error);
        pending.push({
          type: 'ExecutionFailed',
          timestamp: Date.now(),
          executionFailedEventDetails: { error: 'States.Runtime', cause },
        });
        outcome = { status: 'FAILED', error: 'States.Runtime', cause, stopDate: Date.now() };
      }
      if (outcome.status === 'ABORTED') {
        // StopExecution: the emulator already has ABORTED and its event. Else local mode is stopping.
        if (!entry.interrupted || entry.lost) return;
        outcome = { status: 'FAILED', error: LOCAL_MODE_STOPPED, cause: STOPPED_CAUSE, stopDate: Date.now() };
        pending.push({
          type: 'ExecutionFailed',
          timestamp: outcome.stopDate,
          executionFailedEventDetails: { error: outcome.error, cause: outcome.cause },
        });
      }
      await flush(outcome).catch((e) => this.recordFailed(execution, e));
    })().finally(() => {
      this.running.delete(execution.executionArn);
      if (!this.busy) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  private recordFailed(execution: ClaimedExecution, error: unknown): void {
    this.log.error('local Step Functions: recording an execution failed', {
      execution: execution.executionArn,
      error: String(error),
    });
  }

  /** The definition as deployed: read back from the emulator, never from a copy of our own. */
  private async definition(stateMachineArn: string): Promise<Definition> {
    const { definition } = await this.options.clients.sfn.send(
      new DescribeStateMachineCommand({ stateMachineArn }),
    );
    return JSON.parse(definition ?? '{}') as Definition;
  }

  private taskCalls(stateMachineArn: string): TaskCalls {
    return {
      invokeLambda: async (functionName, payload) => {
        // `arn:aws:lambda:region:account:function:NAME[:qualifier]` or the bare name.
        const name = functionName.includes(':function:')
          ? (functionName.split(':function:')[1]?.split(':')[0] ?? functionName)
          : functionName;
        const account = stateMachineArn.split(':')[4] ?? '';
        await this.role.authorize(
          'lambda:Invoke',
          'lambda:InvokeFunction',
          functionName.startsWith('arn:')
            ? functionName
            : `arn:aws:lambda:${this.options.region}:${account}:function:${functionName}`,
        );
        const logicalId = this.functions.get(name);
        if (!logicalId)
          throw new Error(`Function not found: ${functionName} (not in stack ${this.options.stackName})`);
        return this.options.invoker.invoke(logicalId, payload);
      },
      startExecution: async (request) => {
        await this.role.authorize('states:StartExecution', 'states:StartExecution', request.StateMachineArn);
        const started = await this.options.clients.sfn.send(
          new StartExecutionCommand({
            stateMachineArn: request.StateMachineArn,
            ...(request.Name !== undefined ? { name: request.Name } : {}),
            ...(request.Input !== undefined ? { input: request.Input } : {}),
          }),
        );
        return {
          ExecutionArn: started.executionArn ?? '',
          StartDate: (started.startDate ?? new Date()).toISOString(),
        };
      },
    };
  }
}

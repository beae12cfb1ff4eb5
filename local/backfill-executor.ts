import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeStateMachineCommand } from '@aws-sdk/client-sfn';
import { StateMachine } from 'aws-local-stepfunctions';
import type { AwsClients } from '../shared/aws/clients.ts';
import type { BackfillSummary } from '../shared/backfill/request.ts';
import { LambdaFunctionError, type LambdaInvoker } from './lambda/invoker.ts';

// aws-local-stepfunctions 3 targets Node 22 and calls Promise.withResolvers (Node >= 22); Node 20 runs it
// with this standard polyfill. Local mode and tests only: the Lambda functions never load this file.
const promiseCtor = Promise as unknown as { withResolvers?: unknown };
if (!promiseCtor.withResolvers) {
  promiseCtor.withResolvers = <T>() => {
    let resolve!: (value: T) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((a, b) => {
      resolve = a;
      reject = b;
    });
    return { promise, resolve, reject };
  };
}

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/** One execution, as DescribeExecution would show it, plus the progress the CLI draws. */
export interface ExecutionRecord {
  readonly name: string;
  readonly executionArn: string;
  readonly stateMachineArn: string;
  status: ExecutionStatus;
  readonly startDate: string;
  stopDate?: string;
  readonly input: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  /** The latest step's totals. */
  progress?: BackfillSummary;
  /** Step retries (throttling, transient errors). */
  retries: number;
  /** The execution this one continued as (continue-as-new). */
  continuedAs?: string;
  /** pid of the process running it: a record left RUNNING by a dead process is reported as such. */
  readonly pid: number;
}

/**
 * Runs the state machine's Lambda tasks; `logicalIdOf` turns the name or ARN a task names into a logical id,
 * `stop` ends the functions' processes (`close`).
 */
export type TaskInvoker = LambdaInvoker & {
  logicalIdOf?(functionNameOrArn: string): string | undefined;
  stop?(): Promise<void>;
};

export interface LocalBackfillOptions {
  readonly clients: AwsClients;
  readonly stateMachineArn: string;
  /** The local stack's functions (local/lambda/host.ts: each task runs the function's bundle). */
  readonly lambda: TaskInvoker;
  /** Where execution records go, one JSON file each (`inlet backfill status` reads them). */
  readonly recordsDir?: string;
  /** Overrides every Retry interval (ms): tests keep backoff short. */
  readonly retryIntervalMs?: number;
  /**
   * Run this definition instead of the deployed state machine's (bench/backfill-definition.ts synthesizes it):
   * the bench, on resources no stack made, with an invoker of its own.
   */
  readonly standalone?: { readonly definition: object };
}

type StateDefinition = {
  Type: string;
  Resource?: string;
  Parameters?: unknown;
  ItemProcessor?: Definition;
  Iterator?: Definition;
};
type Definition = { States: Record<string, StateDefinition> };

/**
 * Definitions (JSON text) this process has validated. asl-validator builds and compiles its JSON schemas
 * afresh on every call (~0.3 s of CPU), and a run starts an execution per continuation: each definition is
 * checked once, its later executions start without it.
 */
const validated = new Set<string>();

function stateMachineFor(definition: Definition): StateMachine {
  const text = JSON.stringify(definition);
  if (validated.has(text))
    return new StateMachine(definition as never, { validationOptions: { noValidate: true } });
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  // The validator fills in each state's default QueryLanguage: the same definition, as it now reads.
  validated.add(text).add(JSON.stringify(definition));
  return machine;
}

/** Every state, the Map's inner ones too (their names are unique across the machine, as ASL requires). */
function allStates(definition: Definition): Array<[string, StateDefinition]> {
  return Object.entries(definition.States).flatMap(([name, state]) => {
    const inner = state.ItemProcessor ?? state.Iterator;
    return [[name, state] as [string, StateDefinition], ...(inner ? allStates(inner) : [])];
  });
}

/**
 * Step Functions, locally: runs the deployed state machine's definition (from the emulator's Step
 * Functions, as CloudFormation created it from the synthesized template) in aws-local-stepfunctions, an ASL
 * interpreter, with each Lambda task invoking the function it names through the local Lambda host (its
 * bundle, its own process, the Runtime API). moto's own interpreter would run Lambda tasks in Docker, which
 * this machine lacks.
 */
export class LocalBackfill {
  private readonly records = new Map<string, ExecutionRecord>();
  private readonly running = new Map<string, Promise<ExecutionRecord>>();
  private prepared?: Promise<Definition>;
  private stateMachineName: string;

  constructor(private readonly options: LocalBackfillOptions) {
    this.stateMachineName = options.stateMachineArn.split(':').at(-1) ?? 'backfill';
  }

  private prepare(): Promise<Definition> {
    this.prepared ??= (async () => {
      const { clients, standalone } = this.options;
      if (standalone) return standalone.definition as Definition;
      const described = await clients.sfn.send(
        new DescribeStateMachineCommand({ stateMachineArn: this.options.stateMachineArn }),
      );
      return JSON.parse(described.definition ?? '{}') as Definition;
    })();
    return this.prepared;
  }

  executionArn(name: string): string {
    return executionArn(this.options.stateMachineArn, name);
  }

  /** Starts an execution; it runs in this process. Resolves once it is RUNNING. */
  async start(input: unknown, name: string): Promise<ExecutionRecord> {
    const existing = this.records.get(name);
    if (existing) {
      // StartExecution's rule: the same name and input is the same execution.
      if (JSON.stringify(existing.input) === JSON.stringify(input)) return existing;
      throw Object.assign(new Error(`execution ${name} already exists`), { name: 'ExecutionAlreadyExists' });
    }
    const definition = await this.prepare();
    const record: ExecutionRecord = {
      name,
      executionArn: this.executionArn(name),
      stateMachineArn: this.options.stateMachineArn,
      status: 'RUNNING',
      startDate: new Date().toISOString(),
      input,
      retries: 0,
      pid: process.pid,
    };
    this.records.set(name, record);
    this.save(record);
    this.running.set(name, this.execute(definition, record));
    return record;
  }

  /** Resolves when the execution ends (not its continuations). */
  async wait(name: string): Promise<ExecutionRecord> {
    const run = this.running.get(name);
    if (!run) throw new Error(`no execution ${name} in this process`);
    return run;
  }

  /** Waits for an execution and every continuation; returns the chain, last one last. */
  async waitForRun(name: string): Promise<ExecutionRecord[]> {
    const chain: ExecutionRecord[] = [];
    let next: string | undefined = name;
    while (next) {
      const record: ExecutionRecord = await this.wait(next);
      chain.push(record);
      next = record.continuedAs?.split(':').at(-1);
    }
    return chain;
  }

  /**
   * Stops the invoker's function processes: a process that ran executions calls it once they are done, or
   * the processes (children of its own) keep it from exiting.
   */
  async close(): Promise<void> {
    await this.options.lambda.stop?.();
  }

  get(name: string): ExecutionRecord | undefined {
    return this.records.get(name);
  }

  private async execute(definition: Definition, record: ExecutionRecord): Promise<ExecutionRecord> {
    const machine = stateMachineFor(definition);
    const taskResourceLocalHandlers: Record<string, (input: never) => Promise<unknown>> = {};
    const retryIntervalOverrides: Record<string, number> = {};
    for (const [stateName, state] of allStates(definition)) {
      if (state.Type !== 'Task') continue;
      if (this.options.retryIntervalMs !== undefined)
        retryIntervalOverrides[stateName] = this.options.retryIntervalMs;
      if (state.Resource?.endsWith(':states:::lambda:invoke')) {
        // The lambda:invoke integration's result shape. A function error is the task's error: its name is
        // Lambda's errorType (what Retry and Catch match), its cause the error payload, as Step Functions has it.
        taskResourceLocalHandlers[stateName] = async (input: { FunctionName: string; Payload: unknown }) => {
          const { lambda } = this.options;
          const id = lambda.logicalIdOf?.(input.FunctionName) ?? input.FunctionName;
          const result = await lambda.invoke(id, input.Payload);
          if (!result.ok) throw new LambdaFunctionError(result.error);
          return { Payload: result.payload, StatusCode: 200, ExecutedVersion: '$LATEST' };
        };
      } else if (state.Resource?.endsWith(':states:::aws-sdk:sfn:startExecution')) {
        taskResourceLocalHandlers[stateName] = async (input: { Name: string; Input: string }) => {
          const started = await this.start(JSON.parse(input.Input), input.Name);
          record.continuedAs = started.executionArn;
          return { ExecutionArn: started.executionArn, StartDate: started.startDate };
        };
      } else {
        throw new Error(`no local implementation for task ${stateName} (${state.Resource})`);
      }
    }
    const execution = machine.run(record.input as never, {
      overrides: { taskResourceLocalHandlers, retryIntervalOverrides } as never,
      context: {
        Execution: {
          Id: record.executionArn,
          Name: record.name,
          StartTime: record.startDate,
          Input: record.input as never,
        },
        StateMachine: { Id: this.options.stateMachineArn, Name: this.stateMachineName },
      },
    });
    const watch = (async () => {
      for await (const event of execution.eventLogs) {
        const e = event as {
          type: string;
          state?: { name: string; output?: { summary?: BackfillSummary } };
          Error?: string;
          Cause?: string;
        };
        if (e.type === 'ExecutionFailed') {
          record.error = e.Error ?? 'States.Runtime';
          record.cause = e.Cause ?? '';
        }
        if (e.type === 'StateRetried') record.retries += 1;
        if (e.type === 'StateExited' && e.state?.output?.summary) {
          record.progress = e.state.output.summary;
          this.save(record);
        }
      }
    })();
    try {
      record.output = await execution.result;
      record.status = 'SUCCEEDED';
    } catch (error) {
      record.status = 'FAILED';
      record.cause = (error as Error).message;
    }
    // The log's ExecutionFailed event carries the error name and cause as Step Functions reports them.
    await watch.catch(() => {});
    record.stopDate = new Date().toISOString();
    this.save(record);
    return record;
  }

  private save(record: ExecutionRecord): void {
    const dir = this.options.recordsDir;
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${record.name}.json`);
    writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(`${file}.tmp`, file);
  }
}

/** An execution's ARN, from its state machine's and its name (as Step Functions forms it). */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** A record another process saved (`inlet backfill status`). */
export function readExecutionRecord(recordsDir: string, name: string): ExecutionRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(recordsDir, `${name}.json`), 'utf8')) as ExecutionRecord;
  } catch {
    return undefined;
  }
}

import { randomUUID } from 'node:crypto';
import type { LambdaInvokeResult } from '../lambda-invoker.ts';
import { ExecutionAbortedError, ExecutionTimeoutError, StateMachine } from './asl-interpreter.ts';
import {
  allStates,
  type Definition,
  type HistoryEventInput,
  HistoryRecorder,
  type InterpreterEvent,
  type StateDefinition,
  taskResource,
} from './history.ts';
import { AccessDeniedError } from './task-role.ts';
// $$.Execution.StartTime: the execution's own start (see the module).
import './start-time.ts';

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

/** The execution being run, as its context object (`$$.Execution`, `$$.StateMachine`) describes it. */
export interface ExecutionContext {
  readonly executionArn: string;
  readonly name: string;
  readonly stateMachineArn: string;
  /** JSON text, as StartExecution took it. */
  readonly input: string;
  /** When StartExecution was called: `$$.Execution.StartTime`, however late the executor picks it up. */
  readonly startTime: Date;
  readonly roleArn?: string;
}

/** What the task integrations call. */
export interface TaskCalls {
  /** `lambda:invoke`: the function as the definition names it (name or ARN), and the payload. */
  invokeLambda(functionName: string, payload: unknown): Promise<LambdaInvokeResult>;
  /** `aws-sdk:sfn:startExecution` (continue-as-new): the SDK's request, its response. */
  startExecution(request: {
    StateMachineArn: string;
    Name?: string;
    Input?: string;
  }): Promise<{ ExecutionArn: string; StartDate: string }>;
}

export type ExecutionStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** How an execution ended, as DescribeExecution reports it (`output` and `cause` are JSON text / text). */
export interface Outcome {
  readonly status: ExecutionStatus;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
  /** Epoch milliseconds. */
  readonly stopDate: number;
}

export interface RunOptions {
  readonly region: string;
  /** Overrides every Retry interval (ms): tests keep backoff short. */
  readonly retryIntervalMs?: number;
}

/** A task error as Step Functions names it: the error (matched by Retry and Catch) and its cause. */
class TaskError extends Error {
  constructor(name: string, cause: string) {
    // No `cause` option: the interpreter reports `error.cause ?? error.message` as the Cause.
    super(cause);
    this.name = name;
  }
}

/**
 * The longest timer Node keeps (2^31 - 1 ms, about 24.8 days). A Task without TimeoutSeconds has no
 * timeout on AWS ("By default, the Amazon States Language doesn't specify timeouts",
 * https://docs.aws.amazon.com/step-functions/latest/dg/sfn-stuck-execution.html); the interpreter's own
 * default is 60 s, which would fail any longer backfill step. The Lambda function's timeout bounds it.
 */
const NO_TASK_TIMEOUT_SECONDS = 2_147_483;

function withAwsDefaults(definition: Definition): Definition {
  const copy = structuredClone(definition) as Definition;
  for (const [, state] of allStates(copy)) {
    const task = state as StateDefinition & { TimeoutSeconds?: number; TimeoutSecondsPath?: string };
    if (task.Type === 'Task' && task.TimeoutSeconds === undefined && task.TimeoutSecondsPath === undefined)
      task.TimeoutSeconds = NO_TASK_TIMEOUT_SECONDS;
  }
  return copy;
}

/**
 * Definitions (JSON text) this process has validated. asl-validator builds and compiles its JSON schemas
 * afresh on every call, and a run starts an execution per continuation: each definition is checked once,
 * its later executions start without it.
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

const LAMBDA_INVOKE = /:states:::lambda:invoke$/;
const SFN_START_EXECUTION = /:states:::aws-sdk:sfn:startExecution$/;

/** An SDK error as the aws-sdk integrations name it: `Sfn.ExecutionAlreadyExistsException`. */
function sdkTaskError(service: string, error: unknown): TaskError {
  const e = error as Error;
  const name = e.name?.endsWith('Exception') ? e.name : `${e.name ?? 'Unknown'}Exception`;
  return new TaskError(`${service}.${name}`, e.message ?? String(error));
}

function taskImplementations(
  definition: Definition,
  calls: TaskCalls,
  history: HistoryRecorder,
  region: string,
): Record<string, (input: never) => Promise<unknown>> {
  const handlers: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, state] of allStates(definition)) {
    if (state.Type !== 'Task') continue;
    const resource = state.Resource ?? '';
    const call = LAMBDA_INVOKE.test(resource)
      ? lambdaInvoke(calls)
      : SFN_START_EXECUTION.test(resource)
        ? sfnStartExecution(calls)
        : undefined;
    if (!call)
      throw new Error(
        `local Step Functions cannot run task ${name} (${resource}): only lambda:invoke and aws-sdk:sfn:startExecution`,
      );
    const named = taskResource(resource);
    handlers[name] = async (parameters: never) => {
      // The interpreter has dispatched this state's entry (and everything before it) synchronously; its event
      // stream reaches the recorder through promise callbacks only. One macrotask later they are all
      // recorded, so TaskScheduled follows its TaskStateEntered in the history, as on AWS.
      await new Promise((resolve) => setImmediate(resolve));
      history.taskScheduled(named, parameters, region);
      try {
        const output = await call(parameters);
        history.taskSucceeded(named, output);
        return output;
      } catch (error) {
        const failed = error instanceof TaskError ? error : new TaskError('States.TaskFailed', String(error));
        history.taskFailed(named, failed.name, failed.message);
        throw failed;
      }
    };
  }
  return handlers;
}

/**
 * The `lambda:invoke` integration: the Invoke response (Payload, StatusCode, ExecutedVersion); a function
 * error fails the task with the function's errorType as the error and Lambda's error document (JSON) as
 * the cause, as Step Functions reports it.
 */
function lambdaInvoke(calls: TaskCalls) {
  return async (parameters: { FunctionName: string; Payload?: unknown }) => {
    let result: LambdaInvokeResult;
    try {
      result = await calls.invokeLambda(parameters.FunctionName, parameters.Payload ?? null);
    } catch (error) {
      // Lambda refused the Invoke (the state machine's role may not call it): Step Functions reports Lambda's
      // answer as Lambda.AWSLambdaException, the 403 and its code in the cause, as AWS's SDK for Java words
      // it (seen from AWS in aws-samples/lambda-refarch-imagerecognition#19, awslabs/aws-deployment-framework#460).
      if (error instanceof AccessDeniedError)
        throw new TaskError(
          'Lambda.AWSLambdaException',
          `${error.message} (Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException; Request ID: ${randomUUID()}; Proxy: null)`,
        );
      // The function could not be run at all (missing, or its runtime failed): Lambda's own error.
      throw new TaskError('Lambda.ServiceException', (error as Error).message ?? String(error));
    }
    if (result.functionError) {
      const document = result.payload as { errorType?: string };
      throw new TaskError(document?.errorType ?? 'Lambda.Unknown', JSON.stringify(result.payload));
    }
    return { ExecutedVersion: '$LATEST', Payload: result.payload, StatusCode: 200 };
  };
}

function sfnStartExecution(calls: TaskCalls) {
  return async (parameters: { StateMachineArn: string; Name?: string; Input?: string }) => {
    try {
      return await calls.startExecution(parameters);
    } catch (error) {
      throw sdkTaskError('Sfn', error);
    }
  };
}

/**
 * Runs one execution of a definition in the ASL interpreter, reporting its history as Step Functions
 * would (`onEvent`, in order) and resolving with its outcome. `abort()` stops the interpreter (the outcome is
 * then ABORTED; a task call in flight finishes on its own, as a Lambda invocation does on AWS).
 */
export function runExecution(
  rawDefinition: Definition,
  execution: ExecutionContext,
  calls: TaskCalls,
  onEvent: (event: HistoryEventInput) => void,
  options: RunOptions,
): { outcome: Promise<Outcome>; abort: () => void } {
  const definition = withAwsDefaults(rawDefinition);
  const history = new HistoryRecorder(definition, onEvent);
  const machine = stateMachineFor(definition);
  const retryIntervalOverrides: Record<string, number> = {};
  if (options.retryIntervalMs !== undefined)
    for (const [name, state] of allStates(definition))
      if (state.Type === 'Task' || state.Type === 'Map')
        retryIntervalOverrides[name] = options.retryIntervalMs;
  const input = JSON.parse(execution.input) as never;
  const stateMachineName = execution.stateMachineArn.split(':').at(-1) ?? '';
  const run = machine.run(input, {
    overrides: {
      taskResourceLocalHandlers: taskImplementations(definition, calls, history, options.region) as never,
      retryIntervalOverrides,
    },
    context: {
      Execution: {
        Id: execution.executionArn,
        Name: execution.name,
        StartTime: execution.startTime.toISOString(),
        Input: input,
        ...(execution.roleArn ? { RoleArn: execution.roleArn } : {}),
      },
      StateMachine: { Id: execution.stateMachineArn, Name: stateMachineName },
    },
  });
  // The ExecutionFailed event carries the error and cause Step Functions reports (a Fail state's, a task's).
  let failed: { error: string; cause: string } = { error: 'States.Runtime', cause: '' };
  const recorded = (async () => {
    for await (const event of run.eventLogs) {
      const e = event as InterpreterEvent;
      if (e.type === 'ExecutionFailed')
        failed = {
          error: e.Error ?? 'States.Runtime',
          cause: typeof e.Cause === 'string' ? e.Cause : JSON.stringify(e.Cause ?? ''),
        };
      history.interpreter(e);
    }
  })();
  const outcome = (async (): Promise<Outcome> => {
    let status: ExecutionStatus = 'SUCCEEDED';
    let output: string | undefined;
    try {
      output = JSON.stringify((await run.result) ?? null);
    } catch (error) {
      status =
        error instanceof ExecutionAbortedError
          ? 'ABORTED'
          : error instanceof ExecutionTimeoutError
            ? 'TIMED_OUT'
            : 'FAILED';
    }
    // The event stream ends with the execution's last event (ExecutionSucceeded, ExecutionFailed...).
    await recorded.catch(() => {});
    const stopDate = Date.now();
    if (status === 'SUCCEEDED') return { status, output, stopDate };
    if (status === 'FAILED') return { status, ...failed, stopDate };
    if (status === 'TIMED_OUT') return { status, error: 'States.Timeout', stopDate };
    return { status, stopDate };
  })();
  return { outcome, abort: run.abort };
}

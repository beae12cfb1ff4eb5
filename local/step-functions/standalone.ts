import { invokeHandler } from '../lambda-invoker.ts';
import type { Definition, HistoryEventInput } from './history.ts';
import { type ExecutionStatus, runExecution } from './interpreter.ts';

/** One execution of a standalone run, as DescribeExecution would report it, and its history. */
export interface StandaloneExecution {
  readonly executionArn: string;
  readonly name: string;
  readonly status: ExecutionStatus;
  /** Parsed from the output JSON. */
  readonly output?: unknown;
  readonly error?: string;
  readonly cause?: string;
  readonly events: HistoryEventInput[];
}

export interface StandaloneOptions {
  readonly definition: object;
  /** Every `lambda:invoke` task calls this, as Lambda would call the function's handler. */
  readonly handler: (payload: never) => Promise<unknown>;
  readonly input: unknown;
  /** @default a random name */
  readonly name?: string;
  /** @default a made-up ARN in us-east-1 */
  readonly stateMachineArn?: string;
  /** Overrides every Retry interval (ms). */
  readonly retryIntervalMs?: number;
}

/**
 * Runs a definition without an emulator (unit tests, the bench): the execution and each one it starts
 * (continue-as-new), one after the other, in the same interpreter and task integrations as local mode.
 * Returns the chain, first to last.
 */
export async function runStandalone(options: StandaloneOptions): Promise<StandaloneExecution[]> {
  const stateMachineArn =
    options.stateMachineArn ?? 'arn:aws:states:us-east-1:000000000000:stateMachine:standalone';
  const arnOf = (name: string) => `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  const queue: Array<{ name: string; input: string }> = [
    {
      name: options.name ?? `run-${Math.random().toString(36).slice(2, 10)}`,
      input: JSON.stringify(options.input),
    },
  ];
  const chain: StandaloneExecution[] = [];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { name, input } = next;
    const events: HistoryEventInput[] = [];
    const { outcome } = runExecution(
      options.definition as Definition,
      { executionArn: arnOf(name), name, stateMachineArn, input, startTime: new Date() },
      {
        invokeLambda: (_functionName, payload) => invokeHandler(options.handler, payload),
        startExecution: async (request) => {
          const started = request.Name ?? `run-${Math.random().toString(36).slice(2, 10)}`;
          queue.push({ name: started, input: request.Input ?? '{}' });
          return { ExecutionArn: arnOf(started), StartDate: new Date().toISOString() };
        },
      },
      (event) => events.push(event),
      {
        region: 'us-east-1',
        ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
      },
    );
    const ended = await outcome;
    chain.push({
      executionArn: arnOf(name),
      name,
      status: ended.status,
      ...(ended.output !== undefined ? { output: JSON.parse(ended.output) } : {}),
      ...(ended.error !== undefined ? { error: ended.error } : {}),
      ...(ended.cause !== undefined ? { cause: ended.cause } : {}),
      events,
    });
  }
  return chain;
}

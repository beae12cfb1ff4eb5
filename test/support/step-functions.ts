import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  type HistoryEvent,
  paginateGetExecutionHistory,
  type SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';

/** One execution as DescribeExecution reports it, its output parsed. */
export interface DescribedExecution {
  readonly executionArn: string;
  readonly status: string;
  readonly output?: unknown;
  readonly error?: string;
  readonly cause?: string;
  readonly described: DescribeExecutionCommandOutput;
}

function describedOf(d: DescribeExecutionCommandOutput): DescribedExecution {
  return {
    executionArn: d.executionArn ?? '',
    status: d.status ?? 'UNKNOWN',
    ...(d.output !== undefined ? { output: JSON.parse(d.output) } : {}),
    ...(d.error !== undefined ? { error: d.error } : {}),
    ...(d.cause !== undefined ? { cause: d.cause } : {}),
    described: d,
  };
}

/** Polls DescribeExecution until the execution is no longer RUNNING. */
export async function waitForExecution(
  sfn: SFNClient,
  executionArn: string,
  { everyMs = 100, timeoutMs = 240_000 } = {},
): Promise<DescribedExecution> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status !== 'RUNNING') return describedOf(d);
    if (Date.now() > deadline) throw new Error(`${executionArn} still RUNNING after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * A backfill run as a client sees it through the API: the execution and each continuation its output names
 * (`continuedAs`), followed until the last one ends. Returns the chain, first to last.
 */
export async function waitForRun(sfn: SFNClient, executionArn: string): Promise<DescribedExecution[]> {
  const chain: DescribedExecution[] = [];
  for (let next: string | undefined = executionArn; next; ) {
    const ended = await waitForExecution(sfn, next);
    chain.push(ended);
    next = ended.status === 'SUCCEEDED' ? (ended.output as { continuedAs?: string })?.continuedAs : undefined;
  }
  return chain;
}

/** StartExecution, then the whole run. */
export async function startAndWait(
  sfn: SFNClient,
  stateMachineArn: string,
  name: string,
  input: unknown,
): Promise<DescribedExecution[]> {
  const { executionArn } = await sfn.send(
    new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
  );
  return waitForRun(sfn, executionArn ?? '');
}

/** Every event of an execution's history, oldest first, through GetExecutionHistory's pages. */
export async function historyOf(sfn: SFNClient, executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for await (const page of paginateGetExecutionHistory({ client: sfn }, { executionArn, maxResults: 1000 }))
    events.push(...(page.events ?? []));
  return events;
}

/** The message of a Lambda function error's cause (the Node.js runtime's error document). */
export function errorMessage(cause: string | undefined): string {
  return (JSON.parse(cause ?? '{}') as { errorMessage?: string }).errorMessage ?? '';
}

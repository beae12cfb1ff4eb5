import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { synthesizeBackfillDefinition } from '../../../../bench/backfill-definition.ts';
import type { HistoryEventInput } from '../../../../local/step-functions/history.ts';
import { runExecution } from '../../../../local/step-functions/interpreter.ts';
import { runStandalone } from '../../../../local/step-functions/standalone.ts';
import type { BackfillDeps } from '../../../../shared/backfill/backfill.ts';
import { makeBackfillHandler } from '../../../../shared/backfill/backfill-handler.ts';
import { parsePipelineConfig } from '../../../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../../../shared/ingestion/ledger.ts';
import { DefiniteFailureError } from '../../../../shared/kernel/errors.ts';
import { MemoryMetrics } from '../../../../shared/kernel/metrics.ts';
import { RETRYABLE_ERRORS } from '../../../../shared/kernel/names.ts';

// What GetExecutionHistory and DescribeExecution report for an execution the local interpreter ran: the
// event types, their order and their details as Step Functions records them (histories recorded on AWS:
// LocalStack's snapshot tests, e.g. tests/aws/services/stepfunctions/v2/error_handling/
// test_task_service_lambda.snapshot.json and v2/scenarios/test_base_scenarios.snapshot.json).

let definition: object;
beforeAll(() => {
  definition = synthesizeBackfillDefinition();
}, 60_000);

function backfill(keys: readonly string[], list?: BackfillDeps['lister']['list']) {
  const lister: BackfillDeps['lister'] = {
    list:
      list ??
      (async (r) => ({
        objects: keys
          .filter((k) => k.startsWith(r.prefix) && (r.startAfter === undefined || k > r.startAfter))
          .map((key) => ({
            key,
            size: 1,
            eTag: 'e',
            versionId: null,
            lastModified: '2026-01-01T00:00:00.000Z',
          })),
        lastKey: undefined,
        more: false,
      })),
    commonPrefixes: async () => [],
  };
  return makeBackfillHandler({
    config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/' }] }),
    landingBucket: 'landing',
    lister,
    ledger: { knownIdentities: async () => new Set<string>() } as unknown as Ledger,
    enqueuer: { enqueue: async () => {} },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
    now: Date.now,
    limits: { pagesPerStep: 2, pageSize: 10, stepBudgetMs: 60_000, stepsPerExecution: 8 },
  });
}

const types = (events: readonly HistoryEventInput[]) => events.map((e) => e.type);
const details = (events: readonly HistoryEventInput[], type: string) =>
  events.filter((e) => e.type === type).map((e) => Object.values(e).find((v) => typeof v === 'object'));

describe('the history of a local execution, as GetExecutionHistory reports it on AWS', () => {
  it('a backfill that succeeds: task, Map, Choice and Succeed events in order, with their details', async () => {
    const [run] = await runStandalone({
      definition,
      handler: backfill(['orders/a.json', 'orders/b.json']),
      input: { table: 'orders', dryRun: true },
    });
    const events = run?.events ?? [];
    const task = ['TaskStateEntered', 'TaskScheduled', 'TaskStarted', 'TaskSucceeded', 'TaskStateExited'];
    expect(types(events)).toEqual([
      ...task, // Plan
      'MapStateEntered',
      'MapStateStarted',
      'MapIterationStarted',
      ...task, // Step
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'PassStateEntered',
      'PassStateExited',
      'MapIterationSucceeded',
      'MapStateSucceeded',
      'MapStateExited',
      ...task, // Merge
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events[0]).toMatchObject({
      stateEnteredEventDetails: {
        name: 'Plan',
        input: JSON.stringify({ table: 'orders', dryRun: true }),
        inputDetails: { truncated: false },
      },
    });
    const [scheduled] = details(events, 'TaskScheduled') as Array<Record<string, string>>;
    expect(scheduled).toMatchObject({ resourceType: 'lambda', resource: 'invoke', region: 'us-east-1' });
    expect(JSON.parse(scheduled?.parameters ?? '{}')).toMatchObject({ Payload: { action: 'plan' } });
    expect(details(events, 'TaskStarted')[0]).toEqual({ resourceType: 'lambda', resource: 'invoke' });
    expect(details(events, 'MapStateStarted')).toEqual([{ length: 1 }]);
    expect(details(events, 'MapIterationStarted')).toEqual([{ name: 'Partitions', index: 0 }]);
    const [succeeded] = details(events, 'ExecutionSucceeded') as Array<{ output: string }>;
    expect(JSON.parse(succeeded?.output ?? '{}')).toMatchObject({ listed: 2, wouldEnqueue: 2 });
    expect(succeeded).toMatchObject({ outputDetails: { truncated: false } });
    // Events are in time order.
    const times = events.map((e) => e.timestamp);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('a function error fails the task with its errorType and Lambda error document, then the execution', async () => {
    const [run] = await runStandalone({
      definition,
      handler: backfill([]),
      input: { table: 'nope' },
    });
    expect(run).toMatchObject({ status: 'FAILED', error: 'InvalidBackfillInput' });
    // The cause is Lambda's error document for the function error (Node.js runtime: errorType, errorMessage, trace).
    const document = JSON.parse(run?.cause ?? '{}');
    expect(document).toMatchObject({
      errorType: 'InvalidBackfillInput',
      errorMessage: expect.stringMatching(/nope/),
    });
    expect(document.trace).toEqual(expect.any(Array));
    expect(types(run?.events ?? [])).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'ExecutionFailed',
    ]);
    expect(details(run?.events ?? [], 'TaskFailed')[0]).toEqual({
      resourceType: 'lambda',
      resource: 'invoke',
      error: 'InvalidBackfillInput',
      cause: run?.cause,
    });
    expect(details(run?.events ?? [], 'ExecutionFailed')[0]).toEqual({
      error: 'InvalidBackfillInput',
      cause: run?.cause,
    });
  });

  it('a retried task fails, then is scheduled again: no event of its own for the retry', async () => {
    let lists = 0;
    const throttledOnce: BackfillDeps['lister']['list'] = async (r) => {
      lists += 1;
      if (lists === 1) {
        const slowDown = Object.assign(new Error('Please reduce your request rate.'), {
          name: 'SlowDown',
          $metadata: { httpStatusCode: 503 },
        });
        throw new DefiniteFailureError('list failed: SlowDown', slowDown);
      }
      return { objects: [], lastKey: undefined, more: r.prefix === '' };
    };
    const [run] = await runStandalone({
      definition,
      handler: backfill([], throttledOnce),
      input: { table: 'orders' },
      retryIntervalMs: 1,
    });
    expect(run?.status).toBe('SUCCEEDED');
    const step = (run?.events ?? []).map((e) => e.type);
    const failedAt = step.indexOf('TaskFailed');
    expect(step.slice(failedAt - 3, failedAt + 4)).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
    ]);
    expect(details(run?.events ?? [], 'TaskFailed')[0]).toMatchObject({ error: RETRYABLE_ERRORS.throttled });
  });
});

/** One execution of a one-state machine; its outcome. */
function runState(
  state: object,
  { input = {}, startTime = new Date(), invoke = async () => ({ payload: null as unknown }) } = {},
) {
  return runExecution(
    { StartAt: 'Only', States: { Only: { ...state, End: true } as never } },
    {
      executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:e',
      name: 'e',
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:m',
      input: JSON.stringify(input),
      startTime,
    },
    { invokeLambda: invoke, startExecution: async () => ({ ExecutionArn: '', StartDate: '' }) },
    () => {},
    { region: 'us-east-1' },
  ).outcome;
}

describe('the local interpreter keeps what Step Functions guarantees', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('$$.Execution.StartTime is when StartExecution was called, not when the executor picked it up', async () => {
    const startTime = new Date('2020-01-02T03:04:05.678Z');
    const outcome = await runState(
      { Type: 'Pass', Parameters: { 'start.$': '$$.Execution.StartTime' } },
      { startTime },
    );
    expect(JSON.parse(outcome.output ?? '{}')).toEqual({ start: startTime.toISOString() });
    // Only the interpreter's start saw the fixed date: `new Date()` is the clock again.
    expect(new Date().getFullYear()).toBeGreaterThan(startTime.getFullYear());
  });

  it('States.JsonToString is JSON, quotes and backslashes in strings escaped', async () => {
    const input = { cause: '{"errorType":"E","errorMessage":"a \\"quoted\\" \\\\ path"}' };
    const outcome = await runState(
      { Type: 'Pass', Parameters: { 'text.$': 'States.JsonToString($)' } },
      { input },
    );
    expect(JSON.parse(JSON.parse(outcome.output ?? '{}').text)).toEqual(input);
  });

  it('a task without TimeoutSeconds runs as long as it takes (AWS has no default; the interpreter 60 s)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const slow = () => new Promise((resolve) => setTimeout(() => resolve({ done: true }), 120_000));
    const outcome = runState(
      {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: 'f', 'Payload.$': '$' },
        OutputPath: '$.Payload',
      },
      { invoke: async () => ({ payload: await slow() }) },
    );
    await vi.advanceTimersByTimeAsync(121_000);
    expect(await outcome).toMatchObject({ status: 'SUCCEEDED', output: '{"done":true}' });
  });
});

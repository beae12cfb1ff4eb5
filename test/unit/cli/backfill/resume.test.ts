import type { SFNClient } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { StepFunctionsBackfills } from '../../../../cli/backfill/step-functions.ts';
import type { CliTarget } from '../../../../cli/target.ts';
import type { BackfillSummary } from '../../../../shared/backfill/request.ts';

const summary: BackfillSummary = {
  table: 'orders',
  mode: 'backfill',
  dryRun: false,
  run: 'orders-1',
  executions: 1,
  listed: 10,
  matched: 10,
  enqueued: 10,
  alreadyIngested: 0,
  wouldEnqueue: 0,
  partitions: 2,
  pendingPartitions: 2,
  lastKey: null,
  complete: false,
};
const partitions = [
  { prefix: 'orders/', from: 'orders/a/', to: 'orders/m/', startAfter: 'orders/b/1.json' },
  { prefix: 'orders/', from: 'orders/m/', startAfter: 'orders/x/9.json' },
];

describe('inlet backfill status on a deployed stack', () => {
  it('reads the resume points from the last Merge output when the failure cause could not hold them', async () => {
    const input = { table: 'orders', concurrency: 8 };
    const sent: string[] = [];
    const sfn = {
      send: async (command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        if (command.constructor.name === 'DescribeExecutionCommand')
          return {
            status: 'FAILED',
            input: JSON.stringify(input),
            error: 'DefiniteFailureError',
            cause: JSON.stringify({
              summary: { ...summary, resumeInHistory: true },
              failure: { Error: 'DefiniteFailureError', Cause: 'AccessDenied' },
            }),
          };
        return {
          events: [
            { type: 'PassStateExited', stateExitedEventDetails: { name: 'DescribeFailure', output: '{}' } },
            {
              type: 'TaskStateExited',
              stateExitedEventDetails: {
                name: 'Merge',
                output: JSON.stringify({ summary: { ...summary, resume: { partitions } } }),
              },
            },
          ],
        };
      },
    } as unknown as SFNClient;
    const target = {
      clients: { sfn },
      backfillStateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:backfill',
    } as unknown as CliTarget;
    const view = await new StepFunctionsBackfills(target).view('orders-1');
    expect(view.status).toBe('FAILED');
    expect(sent).toContain('GetExecutionHistoryCommand');
    const printed = JSON.parse(/this input: (\{.*\})$/.exec(view.resume ?? '')?.[1] ?? '{}');
    expect(printed).toEqual({ ...input, partitions });
  });
});

import { describe, expect, it } from 'vitest';
import { parseCause } from '../../../../cli/backfill/run-view.ts';

// Step Functions reports a Lambda task's error with the function's error payload, as JSON, as its cause.
const payload = JSON.stringify({
  errorType: 'DefiniteFailureError',
  errorMessage: 'enqueue failed: AccessDenied',
  trace: ['DefiniteFailureError: enqueue failed: AccessDenied', '    at enqueue (index.mjs:1:2)'],
});

describe('a failed backfill as the CLI reports it', () => {
  it("shows the function's error message from the state the failure was described in, with its summary", () => {
    const cause = JSON.stringify({
      summary: { table: 'orders', lastKey: 'orders/a"b.json' },
      failure: { Error: 'DefiniteFailureError', Cause: payload },
    });
    expect(parseCause(cause)).toEqual({
      summary: { table: 'orders', lastKey: 'orders/a"b.json' },
      detail: 'enqueue failed: AccessDenied',
    });
  });

  it("shows the function's error message when the task failed outside the partitions (the plan)", () => {
    expect(parseCause(payload)).toEqual({ detail: 'enqueue failed: AccessDenied' });
  });

  it('shows any other cause as it is', () => {
    expect(parseCause('States.Timeout')).toEqual({ detail: 'States.Timeout' });
    expect(parseCause('{"other":1}')).toEqual({ detail: '{"other":1}' });
  });
});

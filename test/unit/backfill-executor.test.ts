import { describe, expect, it } from 'vitest';
import { LocalBackfill } from '../../local/backfill-executor.ts';
import type { AwsClients } from '../../shared/aws/clients.ts';

// The local executor checks a definition once per process (asl-validator costs ~0.3 s of CPU a call) and
// starts later executions of the same definition without the check: an invalid one must still be refused
// every time, never remembered as checked.

function executor(definition: object) {
  return new LocalBackfill({
    clients: {} as AwsClients,
    stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:test',
    // Never called: a definition of Pass states runs no task.
    lambda: { invoke: () => Promise.reject(new Error('no task runs here')) },
    standalone: { definition },
  });
}

async function runOnce(definition: object, input: object = { table: 'orders' }) {
  const local = executor(definition);
  const name = `run-${Math.random().toString(36).slice(2)}`;
  await local.start(input, name);
  return local.wait(name);
}

const valid = () => ({
  StartAt: 'A',
  States: { A: { Type: 'Pass', Result: { ok: true }, End: true } },
});
/** A transition to a state that does not exist. */
const invalid = () => ({
  StartAt: 'A',
  States: { A: { Type: 'Pass', Next: 'Missing' } },
});

describe('the local executor validates each definition', () => {
  it('refuses an invalid definition on every execution, however often it is started', async () => {
    for (let i = 0; i < 2; i++) await expect(runOnce(invalid())).rejects.toThrow(/definition is invalid/);
  });

  it('runs a valid definition again and again, and still refuses an invalid one after it', async () => {
    for (let i = 0; i < 3; i++) {
      const record = await runOnce(valid());
      expect(record).toMatchObject({ status: 'SUCCEEDED', output: { ok: true } });
    }
    await expect(runOnce(invalid())).rejects.toThrow(/definition is invalid/);
  });
});

describe('intrinsic functions, as Step Functions evaluates them', () => {
  // The backfill's DescribeFailure state puts the whole state, a Lambda task's error payload (a JSON string)
  // among it, into the execution's cause with States.JsonToString; its continuation passes the next
  // execution's input the same way, start keys and all (an S3 key may hold `"` and `\`).
  it('States.JsonToString keeps the escapes of strings that hold quotes and backslashes', async () => {
    const input = {
      table: 'orders',
      failure: { Cause: '{"errorType":"DefiniteFailureError","errorMessage":"a \\"b\\" c"}' },
      startAfter: 'orders/a"b\\c.json',
    };
    const record = await runOnce(
      {
        StartAt: 'A',
        States: { A: { Type: 'Pass', Parameters: { 'json.$': 'States.JsonToString($)' }, End: true } },
      },
      input,
    );
    expect(JSON.parse((record.output as { json: string }).json)).toEqual(input);
  });
});

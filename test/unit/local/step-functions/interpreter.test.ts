import { describe, expect, it } from 'vitest';
import { runStandalone } from '../../../../local/step-functions/standalone.ts';

// The local interpreter checks a definition once per process (asl-validator costs ~0.3 s of CPU a call) and
// starts later executions of the same definition without the check: an invalid one must still be refused
// every time, never remembered as checked.

async function runOnce(definition: object) {
  // Never called: a definition of Pass states runs no task.
  const handler = async () => ({});
  const [execution] = await runStandalone({ definition, handler, input: { table: 'orders' } });
  return execution;
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

describe('the local interpreter validates each definition', () => {
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

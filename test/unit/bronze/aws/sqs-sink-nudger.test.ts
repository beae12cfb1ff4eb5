// The sink's nudge to itself on its FIFO queue: SQS drops a message whose MessageDeduplicationId it has seen
// in the last 5 minutes, so a nudge's id must differ between runs.
import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsSinkNudger } from '../../../../shared/bronze/aws/sqs-sink-nudger.ts';

function capture() {
  const sent: Array<{ MessageGroupId?: string; MessageDeduplicationId?: string }> = [];
  const client = { send: async (command: { input: (typeof sent)[number] }) => void sent.push(command.input) };
  return { sent, nudger: new SqsSinkNudger({ client: client as unknown as SQSClient, queueUrl: 'q' }) };
}

describe('SqsSinkNudger', () => {
  it('gives two runs stopped at the same cursor different deduplication ids, within the 128 SQS allows', async () => {
    const { sent, nudger } = capture();
    const table = 'a'.repeat(63);
    await nudger.nudge(table, 1e19, '0b1f2c3d-0000-4000-8000-000000000001.1');
    await nudger.nudge(table, 1e19, '0b1f2c3d-0000-4000-8000-000000000002.1');
    // The same message received again (its first run failed, or another overlapped it): another run.
    await nudger.nudge(table, 1e19, '0b1f2c3d-0000-4000-8000-000000000002.99999');

    expect(sent.map((m) => m.MessageGroupId)).toEqual([table, table, table]);
    const ids = sent.map((m) => m.MessageDeduplicationId ?? '');
    expect(new Set(ids).size).toBe(3);
    expect(Math.max(...ids.map((id) => id.length))).toBeLessThanOrEqual(128);
  });
});

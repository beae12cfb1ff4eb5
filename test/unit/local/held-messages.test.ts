import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityBatchCommand,
  type ChangeMessageVisibilityBatchCommandInput,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { HeldMessages } from '../../../local/held-messages.ts';
import { pollOnce } from '../../../local/poller.ts';

function sqs(failing = false) {
  const calls: ChangeMessageVisibilityBatchCommandInput[] = [];
  const client = {
    send: async (command: unknown) => {
      if (!(command instanceof ChangeMessageVisibilityBatchCommand)) throw new Error('unexpected');
      calls.push(command.input);
      if (failing) throw Object.assign(new Error('stale'), { name: 'ReceiptHandleIsInvalid' });
      return { Successful: [], Failed: [] };
    },
  } as unknown as SQSClient;
  return { client, calls };
}

describe("local mode's held batches (what a killed run's mappings held)", () => {
  it('keeps the batches in flight in the file, and removes the file once none is', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
    const held = new HeldMessages(file);
    const a = held.hold('q1', ['r1', 'r2']);
    const b = held.hold('q2', ['r3']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([
      { queueUrl: 'q1', receiptHandles: ['r1', 'r2'] },
      { queueUrl: 'q2', receiptHandles: ['r3'] },
    ]);
    held.release(a);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([{ queueUrl: 'q2', receiptHandles: ['r3'] }]);
    held.release(b);
    expect(existsSync(file)).toBe(false);
  });

  it("gives back a killed run's batches: visible again, 10 a call, failures ignored, the file gone", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
    const killed = new HeldMessages(file);
    killed.hold(
      'sink.fifo',
      Array.from({ length: 12 }, (_, i) => `s${i}`),
    );
    killed.hold('ingest', ['i0']);
    // The run is killed here: nothing is released.

    const { client, calls } = sqs(true);
    expect(await new HeldMessages(file).giveBackLeftovers(client)).toBe(13);
    expect(calls.map((c) => [c.QueueUrl, c.Entries?.length])).toEqual([
      ['sink.fifo', 10],
      ['sink.fifo', 2],
      ['ingest', 1],
    ]);
    expect(calls.flatMap((c) => c.Entries ?? []).every((e) => e.VisibilityTimeout === 0)).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it('a file cut short by the kill gives back nothing and is removed', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
    writeFileSync(file, '[{"queueUrl":"q","receiptH');
    const { client, calls } = sqs();
    expect(await new HeldMessages(file).giveBackLeftovers(client)).toBe(0);
    expect(calls).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it('records a FIFO receive by its ReceiveRequestAttemptId before sending it, and its handles once answered', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
    const seen: unknown[] = [];
    const client = {
      send: async (command: unknown) => {
        if (command instanceof ReceiveMessageCommand) {
          // What a kill at this moment (SQS answering) would leave in the file.
          seen.push(JSON.parse(readFileSync(file, 'utf8')));
          expect(command.input.ReceiveRequestAttemptId).toBeTruthy();
          return seen.length === 1
            ? { Messages: [{ MessageId: 'm1', ReceiptHandle: 'r1', Body: '{}' }] }
            : {};
        }
        if (command instanceof DeleteMessageBatchCommand) return {};
        throw new Error('unexpected');
      },
    } as unknown as SQSClient;
    const held = new HeldMessages(file);
    let during: unknown;
    await pollOnce(
      { client, queueUrl: 'http://sqs/000000000000/sink.fifo', held, batchSize: 2, batchingWindowMs: 20 },
      async () => {
        during = JSON.parse(readFileSync(file, 'utf8'));
        return { batchItemFailures: [] };
      },
    );
    const [first] = seen as { attempts: { id: string }[]; receiptHandles: string[] }[][];
    expect(first).toEqual([
      { queueUrl: 'http://sqs/000000000000/sink.fifo', receiptHandles: [], attempts: [expect.anything()] },
    ]);
    expect(during).toEqual([{ queueUrl: 'http://sqs/000000000000/sink.fifo', receiptHandles: ['r1'] }]);
    expect(existsSync(file)).toBe(false);
  });

  it('gives back the messages of a FIFO receive the killed run never saw answered: retried by its attempt id', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'inlet-held-')), 'held-messages.json');
    const killed = new HeldMessages(file);
    const { attemptId } = killed.attempt('sink.fifo');
    // The run is killed while SQS answers: the handles never arrive.
    const retried: (string | undefined)[] = [];
    const calls: ChangeMessageVisibilityBatchCommandInput[] = [];
    const client = {
      send: async (command: unknown) => {
        if (command instanceof ReceiveMessageCommand) {
          retried.push(command.input.ReceiveRequestAttemptId);
          return { Messages: [{ MessageId: 'm1', ReceiptHandle: 'r1' }] };
        }
        if (command instanceof ChangeMessageVisibilityBatchCommand) {
          calls.push(command.input);
          return {};
        }
        throw new Error('unexpected');
      },
    } as unknown as SQSClient;
    expect(await new HeldMessages(file).giveBackLeftovers(client)).toBe(1);
    expect(retried).toEqual([attemptId]);
    expect(calls.flatMap((c) => c.Entries ?? []).map((e) => [e.ReceiptHandle, e.VisibilityTimeout])).toEqual([
      ['r1', 0],
    ]);
    expect(existsSync(file)).toBe(false);
  });
});

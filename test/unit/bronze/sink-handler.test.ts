import { afterEach, describe, expect, it, vi } from 'vitest';
import { NewColumnsError } from '../../../shared/bronze/errors.ts';
import { makeSinkHandler } from '../../../shared/bronze/sink-handler.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Manifest } from '../../../shared/ingestion/manifest.ts';
import { InletError } from '../../../shared/kernel/errors.ts';
import { silentLog } from '../../../shared/kernel/log.ts';
import type { MessageVisibility, RetryLater } from '../../../shared/kernel/message-visibility.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';
import { MemoryCursors, MemoryDelta, MemorySources, manifestOf, sinkEvent } from './memory.ts';

/** SQS's ChangeMessageVisibilityBatch as the lease calls it: each call's receipt handles and seconds. */
function visibilityRecorder(events: string[] = []) {
  const calls: Array<Array<[string, number]>> = [];
  const visibility: MessageVisibility = {
    changeVisibility: async (messages) => {
      calls.push(messages.map((m) => [m.receiptHandle, m.seconds]));
      events.push('lease');
      return [];
    },
  };
  return { calls, visibility };
}

function setup(now: () => number = () => 0, lease?: MessageVisibility) {
  const manifests = new Map<number, Manifest>();
  const sources = new MemorySources();
  const delta = new MemoryDelta();
  const cursors = new MemoryCursors();
  const nudges: Array<[string, number]> = [];
  for (const v of [1, 2]) {
    sources.objects.set(`f${v}.json`, `{"a":${v}}\n`);
    manifests.set(v, manifestOf('t', v, [`f${v}.json`]));
  }
  const handler = makeSinkHandler({
    config: parsePipelineConfig({ tables: [{ name: 't', bronze: { format: 'json' } }] }),
    store: { getManifest: async (_t, v) => manifests.get(v) },
    sources,
    deltaAt: () => delta,
    cursors,
    manifestBucket: 'mb',
    log: silentLog,
    now,
    nudger: { nudge: async (table, after) => void nudges.push([table, after]) },
    metrics: new MemoryMetrics(),
    ...(lease ? { lease: { visibility: lease, seconds: 60, queueVisibilitySeconds: 5400 } } : {}),
  });
  return { handler, delta, cursors, nudges };
}

const committed = JSON.stringify({
  'detail-type': 'BatchCommitted',
  source: 'inlet',
  detail: { table: 't', version: 2 },
});

describe('the sink Lambda handler', () => {
  it('takes BatchCommitted events and its own nudges, catches the table up once per invocation', async () => {
    const { handler, delta, cursors, nudges } = setup();
    const response = await handler(sinkEvent([committed, JSON.stringify({ table: 't' }), committed]), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(response.batchItemFailures).toEqual([]);
    expect([...delta.commits.keys()]).toEqual([0, 1]);
    expect((await cursors.get('t')).deltaVersion).toBe(1);
    expect(nudges).toEqual([]);
  });

  it('nudges itself when the time budget runs out before the table is caught up', async () => {
    let t = 0;
    const { handler, delta, nudges } = setup(() => (t += 40_000));
    await handler(sinkEvent([committed]), { getRemainingTimeInMillis: () => 120_000 });
    expect(delta.commits.size).toBeLessThan(2);
    expect(nudges).toHaveLength(1);
  });

  describe('under the visibility lease', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('holds every message of the invocation from its start, before any write, and leaves no timer when it returns', async () => {
      vi.useFakeTimers({ now: 0 });
      const events: string[] = [];
      const { calls, visibility } = visibilityRecorder(events);
      const { handler, delta } = setup(() => 0, visibility);
      const put = delta.putCommitIfAbsent.bind(delta);
      delta.putCommitIfAbsent = (version, body) => {
        events.push('delta commit');
        return put(version, body);
      };
      const response = await handler(sinkEvent([committed, committed]), {
        getRemainingTimeInMillis: () => 900_000,
      });
      expect(response.batchItemFailures).toEqual([]);
      expect(calls[0]).toEqual([
        ['r0', 60],
        ['r1', 60],
      ]);
      expect(events[0]).toBe('lease');
      expect(events).toContain('delta commit');
      // Ended with the invocation: no beat pending to fire in the next one of a thawed environment.
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(calls).toHaveLength(1);
    });
  });

  it('fails a malformed message (to the DLQ after retries) and the rest of the FIFO batch with it', async () => {
    const { handler } = setup();
    const response = await handler(sinkEvent(['not json', committed]), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
  });
});

describe('one table cannot stall another (F8)', () => {
  /** Tables `a` and `b` on one queue; `a`'s Delta store fails every call with `failure`. */
  function twoTables(failure: Error, lease?: MessageVisibility) {
    const manifests = new Map<string, Manifest>();
    const sources = new MemorySources();
    for (const table of ['a', 'b']) {
      sources.objects.set(`${table}/1.json`, '{"x":1}\n');
      manifests.set(`${table}/1`, manifestOf(table, 1, [`${table}/1.json`]));
    }
    const deltas = { a: new MemoryDelta(), b: new MemoryDelta() };
    const broken = new Proxy(deltas.a, {
      get: () => async () => {
        throw failure;
      },
    });
    const later: RetryLater[] = [];
    const handler = makeSinkHandler({
      config: parsePipelineConfig({
        tables: [
          { name: 'a', prefix: 'a/', bronze: { format: 'json' } },
          { name: 'b', prefix: 'b/', bronze: { format: 'json' } },
        ],
      }),
      store: { getManifest: async (t, v) => manifests.get(`${t}/${v}`) },
      sources,
      deltaAt: (_bucket, prefix) => (prefix.startsWith('a/') ? broken : deltas.b),
      cursors: new MemoryCursors(),
      manifestBucket: 'mb',
      log: silentLog,
      now: () => 0,
      random: () => 1,
      nudger: { nudge: async () => {} },
      metrics: new MemoryMetrics(),
      retries: { retryLater: async (messages) => void later.push(...messages) },
      ...(lease ? { lease: { visibility: lease, seconds: 60, queueVisibilitySeconds: 5400 } } : {}),
    });
    // FIFO order within a batch: a's messages first, then b's (Lambda hands several groups at once).
    const event = sinkEvent([
      JSON.stringify({ table: 'a' }),
      JSON.stringify({ table: 'a' }),
      JSON.stringify({ table: 'b' }),
    ]);
    for (const [i, group] of ['a', 'a', 'b'].entries()) {
      const record = event.Records[i];
      if (record) record.attributes.MessageGroupId = group;
    }
    return { handler, deltas, later, event };
  }

  it("runs the batch's other tables and backs the failed table off by its receive count", async () => {
    const t = twoTables(new InletError('S3 answered 503 after the SDK retries', { retryable: true }));
    const response = await t.handler(t.event, { getRemainingTimeInMillis: () => 900_000 });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
    expect([...t.deltas.b.commits.keys()]).toEqual([0]);
    // Receive 1: 5 s (jitter at its top), for the failed message and the one of its group skipped after it.
    expect(t.later).toEqual([
      { receiptHandle: 'r0', queueArn: 'arn:aws:sqs:us-east-1:000000000000:sink.fifo', seconds: 5 },
      { receiptHandle: 'r1', queueArn: 'arn:aws:sqs:us-east-1:000000000000:sink.fifo', seconds: 5 },
    ]);
  });

  it('lets a table stopped for good (failOnNewColumns) reach the DLQ at the queue timeout, holding no other', async () => {
    const t = twoTables(new NewColumnsError('a', 1, ['x']));
    const response = await t.handler(t.event, { getRemainingTimeInMillis: () => 900_000 });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
    expect([...t.deltas.b.commits.keys()]).toEqual([0]);
    expect(t.later).toEqual([]);
  });

  it('under the lease, gives a table stopped for good the queue timeout back (its messages had only the lease), the others none', async () => {
    const { calls, visibility } = visibilityRecorder();
    const t = twoTables(new NewColumnsError('a', 1, ['x']), visibility);
    const response = await t.handler(t.event, { getRemainingTimeInMillis: () => 900_000 });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
    expect(calls[0]?.map(([handle]) => handle)).toEqual(['r0', 'r1', 'r2']);
    expect(t.later).toEqual([
      { receiptHandle: 'r0', queueArn: 'arn:aws:sqs:us-east-1:000000000000:sink.fifo', seconds: 5400 },
      { receiptHandle: 'r1', queueArn: 'arn:aws:sqs:us-east-1:000000000000:sink.fifo', seconds: 5400 },
    ]);
  });

  it('under the lease, still backs a passing failure off by its receive count', async () => {
    const { visibility } = visibilityRecorder();
    const t = twoTables(
      new InletError('S3 answered 503 after the SDK retries', { retryable: true }),
      visibility,
    );
    await t.handler(t.event, { getRemainingTimeInMillis: () => 900_000 });
    expect(t.later.map((l) => [l.receiptHandle, l.seconds])).toEqual([
      ['r0', 5],
      ['r1', 5],
    ]);
  });
});

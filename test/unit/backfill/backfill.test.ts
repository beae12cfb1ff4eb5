import { describe, expect, it } from 'vitest';
import { backfillRecord, encodeNotificationKey } from '../../../shared/backfill/aws/sqs-enqueuer.ts';
import { continuationName } from '../../../shared/backfill/backfill.ts';
import { RETRYABLE_ERRORS, taskError } from '../../../shared/backfill/backfill-handler.ts';
import { InvalidBackfillInput, planBackfill } from '../../../shared/backfill/request.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import { decodeNotificationKey } from '../../../shared/ingestion/notification-key.ts';
import { parseMessage } from '../../../shared/ingestion/parse-message.ts';
import { Router } from '../../../shared/ingestion/routing.ts';
import { DefiniteFailureError, UnknownOutcomeError } from '../../../shared/kernel/errors.ts';

const config = parsePipelineConfig({
  tables: [
    { name: 'orders', prefix: 'orders/' },
    { name: 'orders_v2', prefix: 'orders/', live: false },
    { name: 'clicks', prefix: 'clicks/', suffix: '.json', bucket: 'other-bucket' },
  ],
});
const execution = { name: 'run-1', startTime: '2026-11-30T12:00:00.000Z' };
const plan = (input: unknown) => planBackfill(input, config, 'landing', execution).plan;
const problems = (input: unknown): readonly string[] => {
  try {
    plan(input);
  } catch (error) {
    if (error instanceof InvalidBackfillInput) return error.problems;
    throw error;
  }
  return [];
};

describe('backfill input', () => {
  it("resolves the bucket, the listing prefix and the time range from the table's config", () => {
    expect(plan({ table: 'orders' })).toMatchObject({
      table: 'orders',
      bucket: 'landing',
      listPrefix: 'orders/',
      dryRun: false,
      mode: 'backfill',
      run: 'run-1',
    });
    expect(plan({ table: 'clicks', prefix: 'clicks/2026/' })).toMatchObject({
      bucket: 'other-bucket',
      listPrefix: 'clicks/2026/',
    });
    // A wider prefix than the table's lists only the table's keys.
    expect(plan({ table: 'orders', prefix: 'ord' }).listPrefix).toBe('orders/');
    expect(plan({ table: 'orders', modifiedAfter: '2026-01-01' }).modifiedAfter).toBe(
      '2026-01-01T00:00:00.000Z',
    );
  });

  it('computes the reconcile window from the execution start, leaving in-flight files to their events', () => {
    expect(
      plan({ table: 'orders', mode: 'reconcile', lookbackSeconds: 7200, settleSeconds: 600 }),
    ).toMatchObject({
      modifiedAfter: '2026-11-30T10:00:00.000Z',
      modifiedBefore: '2026-11-30T11:50:00.000Z',
      mode: 'reconcile',
    });
  });

  it('reports every problem at once, and unknown fields as errors', () => {
    expect(problems({ table: 'nope', prefix: 'x/' })).toEqual([
      "table: 'nope' is not configured; tables: orders, orders_v2, clicks",
    ]);
    expect(problems({ table: 'orders', prefix: 'clicks/' })).toEqual([
      "prefix: 'clicks/' is outside table orders's prefix 'orders/'",
    ]);
    expect(
      problems({ table: 'orders', modifiedAfter: '2026-02-01', modifiedBefore: '2026-01-01' })[0],
    ).toMatch(/modifiedAfter .* must be before modifiedBefore/);
    expect(problems({ table: 'orders', mode: 'reconcile' })).toContain(
      'lookbackSeconds: required in reconcile mode',
    );
    expect(problems({ table: 'orders', lookbackSeconds: 5 })[0]).toMatch(/only in reconcile mode/);
    const inventory = 's3://inv/landing/all/2026-11-30T01-00Z/manifest.json';
    expect(problems({ table: 'orders', inventory, startAfter: 'orders/a', maxObjects: 5 })).toEqual([
      'inventory: reads whole inventory files; startAfter and maxObjects do not apply',
    ]);
    expect(
      problems({ table: 'orders', inventory, partitions: [{ prefix: 'orders/', from: 'orders/a' }] }),
    ).toEqual([
      'partitions: an inventory run resumes with the partitions its failure names (report, file, fileEnd, row)',
    ]);
    expect(
      problems({
        table: 'orders',
        partitions: [{ prefix: 'orders/', report: 'f'.repeat(32), file: 0, fileEnd: 2, row: 5 }],
      }),
    ).toEqual(['partitions: inventory partitions resume only with the inventory they came from']);
    expect(problems({ table: 'orders', modifedAfter: '2026-01-01', maxObjects: 0 })).toEqual([
      'maxObjects: Too small: expected number to be >0',
      '(input): Unrecognized key: "modifedAfter"',
    ]);
  });

  it("carries a continuation over: each partition's cursor, totals and the run name", () => {
    const totals = { listed: 5, matched: 4, enqueued: 3, alreadyIngested: 1, wouldEnqueue: 0 };
    const pending = [{ prefix: 'orders/', to: 'orders/m/', startAfter: 'orders/b' }];
    const { plan: p, resume } = planBackfill(
      { table: 'orders', resume: { pending, partitions: 4, totals, execution: 2, run: 'first' } },
      config,
      'landing',
      { name: 'first-c2', startTime: execution.startTime },
    );
    expect(p.run).toBe('first');
    expect(p.input).toEqual({ table: 'orders' });
    expect(resume).toMatchObject({ pending, partitions: 4, execution: 2 });
    expect(continuationName('first', 3)).toBe('first-c3');
    expect(continuationName('first-c3', 4)).toBe('first-c4');
    expect(continuationName('x'.repeat(80), 12)).toHaveLength(80);
  });
});

describe('backfill records', () => {
  it('encode keys the way S3 notifications do, so the batcher decodes them back', () => {
    for (const key of ['orders/a b+c.json', 'orders/100%/é=x:y;z.json', "orders/dir/~!*()'.json"]) {
      expect(decodeNotificationKey(encodeNotificationKey(key))).toBe(key);
    }
    expect(encodeNotificationKey('orders/a b+c.json')).toBe('orders/a+b%2Bc.json');
  });

  it('parse as S3 records that route to their one table, even one that takes no live events', () => {
    const object = {
      bucket: 'landing',
      key: 'orders/a b.json',
      size: 3,
      eTag: 'abc',
      versionId: null,
      sequencer: null,
      eventTime: '2026-01-01T00:00:00.000Z',
    };
    const body = JSON.stringify({ Records: [backfillRecord(object, { table: 'orders_v2', run: 'r' })] });
    const parsed = parseMessage(body);
    expect(parsed.objects).toEqual([{ ...object, target: 'orders_v2' }]);
    const router = new Router(config);
    const routed = router.route(parsed.objects[0] as never);
    expect(routed.kind === 'routed' && routed.files.map((f) => f.table)).toEqual(['orders_v2']);
    // The same object as a live event: only the live table.
    const live = router.route(object);
    expect(live.kind === 'routed' && live.files.map((f) => f.table)).toEqual(['orders']);
    // A table removed or renamed while its records were queued: never dropped, quarantined with the reason.
    expect(router.route({ ...object, target: 'gone' })).toEqual({
      kind: 'unroutable',
      reason: "backfill record for table 'gone', which is not configured (removed or renamed?)",
    });
  });
});

describe('backfill task errors', () => {
  it('names throttling and unknown outcomes for the Retry, keeps refusals and bad input as they are', () => {
    const slowDown = Object.assign(new Error('reduce your request rate'), { name: 'SlowDown' });
    expect(taskError(new DefiniteFailureError('list failed', slowDown)).name).toBe(
      RETRYABLE_ERRORS.throttled,
    );
    expect(taskError(new UnknownOutcomeError('socket hang up')).name).toBe(RETRYABLE_ERRORS.transient);
    expect(taskError(new DefiniteFailureError('AccessDenied')).name).toBe('DefiniteFailureError');
    expect(taskError(new InvalidBackfillInput(['x'])).name).toBe('InvalidBackfillInput');
    expect(taskError(new TypeError('bug')).name).toBe('TypeError');
  });
});

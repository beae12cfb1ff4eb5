// The batcher against Lambda's remaining time, on the in-memory fakes and the simulated clock: slow claims
// take simulated seconds, so the deadline arithmetic is exact and no test waits for real.
import { expect, it } from 'vitest';
import { makeBatcherHandler } from '../../../shared/ingestion/batcher-handler.ts';
import { CLEAN_VERDICT } from '../../support/harness.ts';
import { MemoryHarness } from '../../support/memory-harness.ts';

const keys = (n: number) => Array.from({ length: n }, (_, i) => `orders/f${String(i).padStart(3, '0')}.json`);

it('the claim deadline follows the Lambda remaining time: late claims are deferred, the rest seals', async () => {
  // The default lease (600 s) would put half of it past any Lambda timeout.
  const h = await MemoryHarness.create({
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], claimConcurrency: 1 },
  });
  const files = keys(10);
  for (const key of files) await h.put(key);
  const ports = h.ports();
  // Each claim takes 800 simulated ms (a slow partition).
  const slow = new Proxy(ports.ledger, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'claimFile') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<typeof target.claimFile>) => {
        await h.scheduler.sleep(undefined, 800);
        return target.claimFile(...args);
      };
    },
  });
  const retries: { seconds: number }[] = [];
  const handler = makeBatcherHandler({
    ...ports,
    ledger: slow,
    config: h.config,
    log: h.log,
    metrics: h.metrics,
    ...h.clock(),
    retries: { retryLater: async (later) => void retries.push(...later) },
  });
  const started = h.now();
  // 11.5 s left: after the 5.75 s kept for sealing (half of it: less than the 10 s margin), 5.75 s of claims
  // (7-8 at 800 ms each).
  const context = { getRemainingTimeInMillis: () => 11_500 - (h.now() - started) };

  const result = await h.pollIngestWith((event) => handler(event, context));

  const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
  expect(sealed?.fileCount).toBeGreaterThanOrEqual(7);
  expect(sealed?.fileCount).toBeLessThanOrEqual(8);
  expect(result.failed).toBe(files.length - (sealed?.fileCount ?? 0));
  // Deferred messages come back at once, not after the queue's visibility timeout.
  expect(retries).toHaveLength(result.failed);
  expect(retries.every((r) => r.seconds <= 2)).toBe(true);
  // The invocation returned before Lambda would have killed it.
  expect(h.now() - started).toBeLessThan(11_500);
  await h.runUntilQuiet();
  expect(await h.verify(files.map((key) => ({ table: 'orders', key })))).toMatchObject({
    ...CLEAN_VERDICT,
    dlqDepth: 0,
  });
});

it('a short Lambda timeout still claims: the time kept for sealing is at most half of what the invocation has', async () => {
  // A batcher deployed with a 5 s timeout (local mode's default, or `inlet:batcherTimeoutSeconds: 5`): with
  // the whole 10 s seal margin taken from 5 s, every claim would be deferred and no file ever ingested.
  const h = await MemoryHarness.create({ config: { tables: [{ name: 'orders', prefix: 'orders/' }] } });
  const files = keys(3);
  for (const key of files) await h.put(key);
  const handler = makeBatcherHandler({
    ...h.ports(),
    config: h.config,
    log: h.log,
    metrics: h.metrics,
    ...h.clock(),
  });
  const started = h.now();
  const context = { getRemainingTimeInMillis: () => 5_000 - (h.now() - started) };

  const result = await h.pollIngestWith((event) => handler(event, context));

  expect(result.failed).toBe(0);
  const [sealed] = await h.ledger.listSealedBatches('orders', Number.MAX_SAFE_INTEGER);
  expect(sealed?.fileCount).toBe(3);
});

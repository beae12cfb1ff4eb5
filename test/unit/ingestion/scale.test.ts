// The batcher and committer at Lambda's largest batch, on the in-memory harness: what this proves is that the
// use-case code takes 10,000 files in one invocation (claims, one staged list, one seal, one version), which
// on moto costs 45 s of emulator requests and proves nothing more about the adapters. The adapters' share of
// the same path (receives and deletes of 10, bounded claim concurrency, one large staged list and manifest)
// runs on moto at 1,000 files in test/integration/scale.test.ts.
import { describe, expect, it } from 'vitest';
import { s3Notification } from '../../support/events.ts';
import { CLEAN_VERDICT } from '../../support/harness.ts';
import { MemoryHarness } from '../../support/memory-harness.ts';

const keys = (n: number) =>
  Array.from({ length: n }, (_, i) => `events/2026/11/29/part-${String(i).padStart(5, '0')}.json`);

describe('scale, in memory', () => {
  it('one invocation claims, stages and commits a 10,000-file batch', async () => {
    const h = await MemoryHarness.create({
      config: { tables: [{ name: 'events', prefix: 'events/' }], leaseSeconds: 300 },
      // Longer than the invocation takes on the simulated clock, so nothing is redelivered meanwhile.
      visibilityMs: 300_000,
    });
    const files = keys(10_000);
    // 1,000 messages of 10 records each: Lambda's BatchSize counts messages, at most 10,000.
    for (let i = 0; i < files.length; i += 10) {
      await h.sendEvent(
        s3Notification(
          ...files.slice(i, i + 10).map((key) => ({ bucket: h.landingBucket, key, size: 1000 })),
        ),
      );
    }

    const run = await h.pollIngest(undefined, 1_000);
    expect(run).toMatchObject({ received: 1000, failed: 0, crashed: false });
    expect(h.metrics.totals.get('FilesClaimed')).toBe(10_000);
    expect(h.ingest.size).toBe(0);
    await h.runUntilQuiet();

    const verdict = await h.verify(files.map((key) => ({ table: 'events', key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    expect(verdict.versions.events).toEqual([1]);
    const [manifest] = await h.manifests('events');
    expect(manifest).toMatchObject({ fileCount: 10_000, bytes: 10_000_000 });
    expect(manifest?.batchIds).toHaveLength(1);
    expect(manifest?.entries).toHaveLength(10_000);
  });
});

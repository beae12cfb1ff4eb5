// A backlog of commit requests after group commit (docs/protocol.md, C1): one request's version takes the
// table's other waiting batches, and their own requests, which come later, find nothing to do. Each costs a
// committer one consistent read per request unless the invocation reads its requests' batches at once.
import { describe, expect, it, vi } from 'vitest';
import { SimLedger } from '../../sim/fakes/ledger.ts';
import { CLEAN_VERDICT } from '../../support/harness.ts';
import { MemoryHarness } from '../../support/memory-harness.ts';

const TABLE = 'orders';
const keys = Array.from({ length: 25 }, (_, i) => `${TABLE}/f${String(i).padStart(2, '0')}.json`);

/** 25 sealed batches of one file each, their 25 commit requests queued, nothing committed yet. */
async function backlog() {
  const h = await MemoryHarness.create({
    config: { tables: [{ name: TABLE, prefix: `${TABLE}/` }], leaseSeconds: 300 },
    visibilityMs: 300_000,
  });
  for (const key of keys) await h.put(key);
  for (const _ of keys) expect(await h.pollIngest(undefined, 1)).toMatchObject({ received: 1, failed: 0 });
  expect(h.commits.size).toBe(25);
  return h;
}

/** Reads of single batches the committer made (C1's GetItem), and reads of several at once. */
function reads(h: MemoryHarness) {
  let single = 0;
  let several = 0;
  for (const [op, n] of h.aws.calls) {
    if (op.startsWith('get batch ')) single += n;
    if (op.startsWith('get batches ')) several += n;
  }
  return { single, several };
}

describe('a backlog of commit requests', () => {
  it('commits one version and answers the requests its group covered without reading their batches one by one', async () => {
    const h = await backlog();
    const before = reads(h);
    for (let i = 0; i < 3; i++) expect(await h.pollCommit()).toMatchObject({ crashed: false, failed: 0 });
    expect(h.commits.size).toBe(0);

    const verdict = await h.verify(keys.map((key) => ({ table: TABLE, key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    expect(verdict.versions[TABLE]).toEqual([1]);
    const after = reads(h);
    // The first request's C1 only: the other 24 were the group's (9 in its own invocation, 15 in the next two,
    // each invocation reading its 10 requests' batches in one request).
    expect(after.single - before.single).toBe(1);
    expect(after.several - before.several).toBe(3);
  });

  it('still commits every batch when reading ahead fails', async () => {
    const h = await backlog();
    // Every read of several batches refused: each request takes the whole commit path instead.
    const refused = vi.spyOn(SimLedger.prototype, 'getBatches').mockRejectedValue(new Error('refused'));
    try {
      for (let i = 0; i < 3; i++) expect(await h.pollCommit()).toMatchObject({ crashed: false, failed: 0 });
    } finally {
      refused.mockRestore();
    }
    const verdict = await h.verify(keys.map((key) => ({ table: TABLE, key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    expect(verdict.versions[TABLE]).toEqual([1]);
    expect(h.logs.filter((l) => l.message.startsWith('commit requests not read ahead'))).toHaveLength(3);
  });
});

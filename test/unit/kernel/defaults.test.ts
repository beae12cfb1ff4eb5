import { describe, expect, it } from 'vitest';
import { HANDOVER_AFTER_RECEIVES } from '../../../shared/ingestion/committer-handler.ts';
import { DEFAULTS } from '../../../shared/kernel/defaults.ts';

// The defaults depend on each other across layers (a construct's timeout, a function's budget inside it): each
// relation the protocol needs, checked where the numbers live, so changing one default cannot break another.
describe('DEFAULTS', () => {
  it("a claim's lease outlasts the batcher that holds it", () => {
    expect(DEFAULTS.leaseSeconds).toBeGreaterThan(DEFAULTS.batcherTimeoutSeconds);
  });

  it("the sweeper's and the backfill step's budgets stop inside their functions' timeouts", () => {
    expect(DEFAULTS.sweeper.budgetSeconds + DEFAULTS.sweeper.marginSeconds).toBeLessThanOrEqual(
      DEFAULTS.sweeper.timeoutSeconds,
    );
    expect(DEFAULTS.backfill.stepBudgetSeconds).toBeLessThan(DEFAULTS.backfill.timeoutSeconds);
  });

  it('the committer hands a commit failing for load to the sweeper before the queue dead-letters it', () => {
    expect(HANDOVER_AFTER_RECEIVES).toBeLessThan(DEFAULTS.maxReceiveCount);
  });

  it("the sink's lease is shorter than its queue's visibility timeout, which it replaces while a run lives", () => {
    expect(DEFAULTS.sink.leaseSeconds).toBeLessThan(
      DEFAULTS.sink.timeoutSeconds * DEFAULTS.queueVisibilityTimeouts,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_LIMITS } from '../../../shared/ingestion/commit-group.ts';
import { ConfigError } from '../../../shared/kernel/errors.ts';
import { backfillFromEnv } from '../../../shared/runtime/backfill.ts';
import { committerRuntimeFromEnv } from '../../../shared/runtime/committer.ts';
import { sinkRuntimeFromEnv } from '../../../shared/runtime/sink.ts';
import { sweeperRuntimeFromEnv } from '../../../shared/runtime/sweeper.ts';
import { functionEnv } from '../../support/function-env.ts';

// A function's environment is written by the construct (shared/config/function-env.ts); a variable missing
// or malformed is a configuration problem, reported as one ConfigError naming every such variable at once,
// never a bare Error, and never only the first of several.

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const without = (env: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(env).filter(([name]) => !names.includes(name)));

describe('function environments', () => {
  it('a missing variable is a ConfigError naming it', () => {
    const error = thrown(() =>
      sweeperRuntimeFromEnv('inlet-sweeper', without(functionEnv('sweeper'), 'INLET_COMMIT_QUEUE_URL')),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('INLET_COMMIT_QUEUE_URL: environment variable is not set');
  });

  it('every problem at once: missing variables, a malformed number and a bad configuration, in one ConfigError', () => {
    const error = thrown(() =>
      backfillFromEnv('inlet-backfill', {
        AWS_REGION: 'us-east-1',
        INLET_CONFIG: JSON.stringify({ tables: [] }),
        INLET_BACKFILL_PAGE_SIZE: 'ten',
      }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of [
      'INLET_CONFIG',
      'INLET_LEDGER_TABLE',
      'INLET_LANDING_BUCKET',
      'INLET_INGEST_QUEUE_URL',
      'INLET_BACKFILL_PAGE_SIZE',
    ])
      expect(error.message).toContain(name);
    expect(error.message).toContain('at least one table is required');
  });

  it('a malformed number is a ConfigError naming it, its range and what it got', () => {
    const error = thrown(() =>
      committerRuntimeFromEnv('inlet-committer', {
        ...functionEnv('committer'),
        INLET_COMMIT_MAX_BATCHES: '100',
        INLET_COMMIT_MAX_BYTES: '-1',
      }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/INLET_COMMIT_MAX_BATCHES: must be a whole number from 1 to 99, got "100"/);
    expect(error.message).toMatch(/INLET_COMMIT_MAX_BYTES: must be a whole number of at least 1, got "-1"/);
  });

  it("the committer's group-commit limits come from its environment, through its runtime; unset or empty is the default", () => {
    const runtime = committerRuntimeFromEnv('inlet-committer', {
      ...functionEnv('committer'),
      INLET_COMMIT_MAX_BATCHES: '3',
      INLET_COMMIT_MAX_FILES: '500',
      INLET_COMMIT_MAX_BYTES: '',
    });
    expect(runtime.group).toEqual({ maxBatches: 3, maxFiles: 500, maxBytes: 10 * 1024 ** 3 });
    expect(committerRuntimeFromEnv('inlet-committer', functionEnv('committer')).group).toEqual(
      DEFAULT_GROUP_LIMITS,
    );
  });

  it("the sweeper's settings come from its environment, with the sweep defaults", () => {
    expect(sweeperRuntimeFromEnv('inlet-sweeper', functionEnv('sweeper')).settings).toEqual({
      staleAfterMs: 300_000,
      maxResends: 2000,
      marginMs: 10_000,
      budgetMs: 50_000,
      pageSize: 1000,
    });
    const tuned = sweeperRuntimeFromEnv('inlet-sweeper', {
      ...functionEnv('sweeper'),
      INLET_STALE_AFTER_SECONDS: '60',
      INLET_SWEEP_MAX_RESENDS: '5',
    }).settings;
    expect(tuned).toMatchObject({ staleAfterMs: 60_000, maxResends: 5 });
    const bad = thrown(() =>
      sweeperRuntimeFromEnv('inlet-sweeper', {
        ...functionEnv('sweeper'),
        INLET_SWEEP_MAX_RESENDS: 'lots',
        INLET_STALE_AFTER_SECONDS: '-5',
      }),
    );
    expect(bad).toBeInstanceOf(ConfigError);
    expect(bad.message).toMatch(/INLET_STALE_AFTER_SECONDS[\s\S]*INLET_SWEEP_MAX_RESENDS/);
  });

  it('the sink reports its missing queue the same way', () => {
    const error = thrown(() => sinkRuntimeFromEnv(without(functionEnv('sink'), 'INLET_SINK_QUEUE_URL')));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('INLET_SINK_QUEUE_URL');
  });

  it('every function starts from the environment the construct writes for it', () => {
    expect(() => sinkRuntimeFromEnv(functionEnv('sink'))).not.toThrow();
    expect(backfillFromEnv('inlet-backfill', functionEnv('backfill')).limits).toEqual({
      pagesPerStep: 20,
      pageSize: 1000,
      stepBudgetMs: 120_000,
      stepsPerExecution: 1000,
    });
  });
});

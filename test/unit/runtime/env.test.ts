import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/kernel/errors.ts';
import {
  backfillFromEnv,
  committerRuntimeFromEnv,
  sweeperRuntimeFromEnv,
} from '../../../shared/runtime/pipeline.ts';
import { sinkRuntimeFromEnv } from '../../../shared/runtime/sink.ts';

// A function's environment is set by infra/functions.ts; a variable missing or malformed is a configuration
// problem, reported as one (ConfigError, naming the variable), never a bare Error thrown at start-up.
const base = {
  AWS_REGION: 'us-east-1',
  INLET_CONFIG: JSON.stringify({ tables: [{ name: 'events', prefix: 'events/' }] }),
  INLET_LEDGER_TABLE: 'ledger',
};

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('function environments', () => {
  it('a missing variable is a ConfigError naming it', () => {
    const error = thrown(() => sweeperRuntimeFromEnv('inlet-sweeper', base));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('INLET_COMMIT_QUEUE_URL');
  });

  it('a malformed number is a ConfigError naming it', () => {
    const error = thrown(() =>
      backfillFromEnv('inlet-backfill', {
        ...base,
        INLET_LANDING_BUCKET: 'landing',
        INLET_INGEST_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q',
        INLET_BACKFILL_PAGE_SIZE: 'ten',
      }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('INLET_BACKFILL_PAGE_SIZE');
  });

  it("the committer's group-commit limits come from its environment, through its runtime", () => {
    const runtime = committerRuntimeFromEnv('inlet-committer', {
      ...base,
      INLET_MANIFEST_BUCKET: 'm',
      INLET_COMMIT_MAX_BATCHES: '3',
      INLET_COMMIT_MAX_FILES: '500',
    });
    expect(runtime.group).toMatchObject({ maxBatches: 3, maxFiles: 500 });
  });

  it('the sink reports its missing queue the same way', () => {
    const error = thrown(() => sinkRuntimeFromEnv({ ...base, INLET_MANIFEST_BUCKET: 'm' }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('INLET_SINK_QUEUE_URL');
  });
});

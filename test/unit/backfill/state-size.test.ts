import { StateMachine } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeBackfillDefinition } from '../../../bench/backfill-definition.ts';
import { parseCause } from '../../../cli/backfill/run-view.ts';
import type { BackfillDeps } from '../../../shared/backfill/backfill.ts';
import { type BackfillTask, makeBackfillHandler } from '../../../shared/backfill/backfill-handler.ts';
import type { InventoryManifest } from '../../../shared/backfill/inventory-report.ts';
import type { InventoryReader, ListPage, ObjectLister } from '../../../shared/backfill/ports.ts';
import type { BackfillSummary } from '../../../shared/backfill/request.ts';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { Ledger } from '../../../shared/ingestion/ledger.ts';
import { DefiniteFailureError } from '../../../shared/kernel/errors.ts';
import { MemoryMetrics } from '../../../shared/kernel/metrics.ts';

// Step Functions refuses a state input or output, and a task's input, over 262,144 bytes (UTF-8) with
// States.DataLimitExceeded, which fails the execution and loses every partition's cursor; an execution's
// failure cause is at most 32,768 characters
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html ,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ExecutionFailedEventDetails.html).
// The emulator and the local interpreter enforce neither: this runs the synthesized definition with the real
// handler on the worst cases and measures every state.
const STATE_LIMIT = 262_144;

// aws-local-stepfunctions calls Promise.withResolvers (Node >= 22); on Node 20, the standard polyfill.
const promises = Promise as unknown as { withResolvers?: unknown };
promises.withResolvers ??= <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
};
const CAUSE_LIMIT = 32_768;

let definition: object;
beforeAll(() => {
  definition = synthesizeBackfillDefinition();
}, 60_000);

type Sizes = Record<string, number>;

/**
 * One execution of the definition in aws-local-stepfunctions: each state's input and output, each task's
 * input, measured as JSON. A handler error reaches the Catch as Lambda reports it: the Cause is the JSON of
 * errorType, errorMessage and the stack's lines.
 */
async function measure(deps: BackfillDeps, input: Record<string, unknown>) {
  const handler = makeBackfillHandler(deps);
  const sizes: Sizes = {};
  const note = (where: string, value: unknown) => {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
    sizes[where] = Math.max(sizes[where] ?? 0, bytes);
  };
  const lambda = async (payload: { Payload: BackfillTask }) => {
    try {
      return { Payload: await handler(payload.Payload), StatusCode: 200 };
    } catch (error) {
      const e = error as Error;
      const cause = JSON.stringify({
        errorType: e.name,
        errorMessage: e.message,
        trace: (e.stack ?? '').split('\n'),
      });
      throw Object.assign(new Error(cause), { name: e.name });
    }
  };
  const outputs: Array<{ state: string; output: unknown }> = [];
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  const states = JSON.stringify(definition);
  const handlers: Record<string, (input: never) => Promise<unknown>> = {};
  for (const name of ['Plan', 'Step', 'Merge']) {
    if (!states.includes(`"${name}"`)) throw new Error(`no ${name} state`);
    handlers[name] = async (payload: never) => {
      note(`${name} task input`, payload);
      return lambda(payload);
    };
  }
  handlers.ContinueAsNew = async (payload: never) => {
    note('ContinueAsNew task input', payload);
    note('continuation execution input', JSON.parse((payload as { Input: string }).Input));
    return { ExecutionArn: 'arn:aws:states:us-east-1:000000000000:execution:test:run-c2' };
  };
  const execution = machine.run(input as never, {
    overrides: { taskResourceLocalHandlers: handlers, retryIntervalOverrides: { Step: 0 } } as never,
    context: {
      Execution: { Id: 'x', Name: 'run', StartTime: '2026-11-30T12:00:00.000Z', Input: input as never },
      StateMachine: { Id: 'arn:aws:states:us-east-1:000000000000:stateMachine:test', Name: 'test' },
    },
  });
  let cause: string | undefined;
  const watch = (async () => {
    for await (const event of execution.eventLogs) {
      const e = event as {
        type: string;
        state?: { name: string; input?: unknown; output?: unknown };
        Cause?: string;
      };
      if (e.type === 'StateEntered' && e.state) note(`${e.state.name} input`, e.state.input);
      if (e.type === 'StateExited' && e.state) {
        note(`${e.state.name} output`, e.state.output);
        outputs.push({ state: e.state.name, output: e.state.output });
      }
      if (e.type === 'ExecutionFailed') cause = e.Cause;
    }
  })();
  const result = await execution.result.then(
    (output) => ({ status: 'SUCCEEDED', output }),
    (error: Error) => ({ status: 'FAILED', error }),
  );
  await watch.catch(() => {});
  return { sizes, result, cause, outputs };
}

function expectWithinLimits(sizes: Sizes) {
  const over = Object.entries(sizes).filter(([, bytes]) => bytes > STATE_LIMIT);
  expect(over, JSON.stringify(sizes)).toEqual([]);
}

const baseDeps = (
  config: Record<string, unknown>,
  lister: ObjectLister,
  inventory?: InventoryReader,
): BackfillDeps => ({
  config: parsePipelineConfig({ tables: [{ name: 'orders', prefix: 'orders/', ...config }] }),
  landingBucket: 'landing',
  lister,
  ...(inventory ? { inventory } : {}),
  ledger: { knownIdentities: async () => new Set<string>() } as unknown as Ledger,
  enqueuer: { enqueue: async () => {} },
  log: { debug() {}, info() {}, warn() {}, error() {} },
  metrics: new MemoryMetrics(),
  now: Date.now,
  limits: { pagesPerStep: 1, pageSize: 1000, stepBudgetMs: 60_000, stepsPerExecution: 1 },
});

const noLister: ObjectLister = {
  list: async () => ({ objects: [], more: false }),
  commonPrefixes: async () => [],
};

/** An error message far longer than any state should carry (an SDK error can quote a whole response). */
const HUGE = 'AccessDenied: '.padEnd(20_000, 'x');

/** A report of 3,000 data files whose pages never end (or fail). */
function bigInventory(fail: boolean): InventoryReader {
  const files = Array.from({ length: 3000 }, (_, i) => ({
    key: `inventory-destination/landing/all-versions-with-a-long-configuration-id/data/${String(i).padStart(36, '0')}.csv.gz`,
    size: 1,
    md5: '0'.repeat(32),
  }));
  const manifest: InventoryManifest = {
    sourceBucket: 'landing',
    md5: 'f'.repeat(32),
    columns: ['Bucket', 'Key'],
    files,
  };
  return {
    manifest: async () => manifest,
    forget: () => {},
    page: async (): Promise<ListPage> => {
      if (fail) throw new DefiniteFailureError(HUGE);
      return { objects: [], rows: 1000, more: true };
    },
  };
}

/** 2,000 folders of 200-character names; every page ends on a 1,024-byte key and a 1,024-byte version id. */
function longKeys(fail: boolean): ObjectLister {
  const folders = Array.from(
    { length: 2000 },
    (_, i) => `orders/${String(i).padStart(5, '0')}${'f'.repeat(190)}/`,
  );
  return {
    commonPrefixes: async (r) => (r.prefix === 'orders/' ? folders : []),
    list: async (r): Promise<ListPage> => {
      if (fail) throw new DefiniteFailureError(HUGE);
      const base = r.startAfter ?? r.prefix;
      const key = `${base.slice(0, 300)}~`.padEnd(1024, 'k');
      return { objects: [], lastKey: key, lastVersionId: 'v'.repeat(1024), more: true };
    },
  };
}

describe('the backfill state machine stays within Step Functions size limits, worst cases', () => {
  it('an inventory of 3,000 data files: partitions batch the files, and a round continues within the limits', async () => {
    const { sizes, result } = await measure(baseDeps({}, noLister, bigInventory(false)), {
      table: 'orders',
      inventory: 's3://inv/landing/all/2026-11-30T01-00Z/manifest.json',
      concurrency: 40,
    });
    expect(result.status, String((result as { error?: Error }).error?.message).slice(0, 600)).toBe(
      'SUCCEEDED',
    );
    expectWithinLimits(sizes);
  }, 120_000);

  it('an inventory of 3,000 data files whose every partition fails with a huge error: the run fails within the limits, with every resume point', async () => {
    const { sizes, result, cause, outputs } = await measure(baseDeps({}, noLister, bigInventory(true)), {
      table: 'orders',
      inventory: 's3://inv/landing/all/2026-11-30T01-00Z/manifest.json',
      concurrency: 40,
    });
    expect(result.status).toBe('FAILED');
    expectWithinLimits(sizes);
    expect(cause?.length ?? 0).toBeLessThanOrEqual(CAUSE_LIMIT);
    expect(parseCause(cause).summary?.complete).toBe(false);
    // What `inlet backfill status` reads when the cause cannot hold them: Merge's output, in the history.
    const merge = outputs.filter((o) => o.state === 'Merge').at(-1)?.output as { summary: BackfillSummary };
    expect(merge.summary.resume?.partitions.length).toBe(merge.summary.pendingPartitions);
  }, 120_000);

  it('a versioned table over 2,000 long folders, cursors of 1,024-byte keys and version ids: continues within the limits', async () => {
    const { sizes, result } = await measure(baseDeps({ allowOverwrites: true }, longKeys(false)), {
      table: 'orders',
      concurrency: 40,
    });
    expect(result.status, String((result as { error?: Error }).error?.message).slice(0, 600)).toBe(
      'SUCCEEDED',
    );
    expectWithinLimits(sizes);
  }, 120_000);

  it('the same, every partition failing with a huge error: fails within the limits', async () => {
    const { sizes, result, cause } = await measure(baseDeps({ allowOverwrites: true }, longKeys(true)), {
      table: 'orders',
      concurrency: 40,
    });
    expect(result.status).toBe('FAILED');
    expectWithinLimits(sizes);
    expect(cause?.length ?? 0).toBeLessThanOrEqual(CAUSE_LIMIT);
  }, 120_000);
});

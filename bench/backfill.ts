// The backfill's listing rate: list the bucket, check the ledger, enqueue.
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { S3ObjectLister } from '../shared/backfill/s3-lister.ts';
import { SqsEnqueuer } from '../shared/backfill/sqs-enqueuer.ts';
import { parsePipelineConfig } from '../shared/config.ts';
import { MemoryMetrics } from '../shared/metrics.ts';
import { BackfillRun } from '../shared/usecases/backfill.ts';
import { uniqueName } from '../test/support/names.ts';
import { HISTORY, type HistoryFixture } from './incremental.ts';
import { type Benchmark, log } from './support.ts';

/** Runs on the bucket the incremental benchmark filled. */
export const backfill: Benchmark = {
  name: 'backfill',
  async run({ observer, fixtures }) {
    const fixture = fixtures.get(HISTORY) as HistoryFixture | undefined;
    if (!fixture) throw new Error('the backfill benchmark needs the incremental benchmark to run first');
    log('backfill: list the bucket, check the ledger, enqueue');
    const queue = await observer.sqs.send(
      new CreateQueueCommand({ QueueName: uniqueName('bench-backfill') }),
    );
    const run = new BackfillRun({
      config: parsePipelineConfig({ tables: [{ name: 'hist', prefix: 'hist/' }] }),
      landingBucket: fixture.bucket,
      lister: new S3ObjectLister(observer.s3),
      ledger: fixture.h.ledger,
      enqueuer: new SqsEnqueuer({
        client: observer.sqs,
        queueUrl: queue.QueueUrl ?? '',
        recordsPerMessage: 10,
      }),
      log: { debug() {}, info() {}, warn() {}, error() {} },
      metrics: new MemoryMetrics(),
      now: Date.now,
      limits: { pagesPerStep: 20, stepBudgetMs: 120_000, stepsPerExecution: 1_000_000 },
    });
    const started = Date.now();
    let state = run.plan({ table: 'hist' }, { name: 'bench', startTime: new Date().toISOString() });
    while (state.next !== 'done') state = await run.step(state);
    const backfillMs = Date.now() - started;
    if (state.totals.listed !== fixture.objects || state.totals.alreadyIngested !== fixture.ingested)
      throw new Error(`backfill totals off: ${JSON.stringify(state.totals)}`);
    return { backfillObjectsPerSecond: Math.round(state.totals.listed / (backfillMs / 1000)) };
  },
};

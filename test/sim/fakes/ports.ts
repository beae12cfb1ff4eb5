import type { Aws } from '../faults.ts';
import type { Rng, Scheduler, Worker } from '../scheduler.ts';
import type { DynamoTable } from './dynamo.ts';
import { type Classify, SimLedger } from './ledger.ts';
import { type S3Bucket, SimBatchStore } from './s3.ts';
import { type EventBus, SimCommitQueue, SimEventPublisher, type SqsQueue } from './sqs.ts';

/** The AWS state the protocol's four ports stand on, shared by every worker of one simulated world. */
export interface SimAccount {
  readonly db: DynamoTable;
  readonly bucket: S3Bucket;
  readonly commits: SqsQueue;
  readonly bus: EventBus;
  readonly aws: Aws;
  readonly scheduler: Scheduler;
  readonly rng: Rng;
}

/**
 * The ledger, batch store, commit queue and event publisher as one worker's Lambda sees them, on the
 * simulated clock (backoff sleeps there, where the worker may crash). Used by the simulation (world.ts) and
 * the in-memory protocol harness (test/support/memory-harness.ts).
 */
export function simPorts(
  account: SimAccount,
  worker: Worker,
  options: {
    readonly classify?: Classify;
    readonly ledger?: (ctx: ConstructorParameters<typeof SimLedger>[0]) => SimLedger;
    /** Whether the commit queue's own faults apply now. */
    readonly faulty: () => boolean;
  },
) {
  const { classify } = options;
  const sleep = (ms: number) => account.scheduler.sleep(worker, ms);
  const random = () => account.rng.next();
  const ledgerCtx = { db: account.db, aws: account.aws, worker, classify, sleep, random };
  return {
    ledger: options.ledger?.(ledgerCtx) ?? new SimLedger(ledgerCtx),
    store: new SimBatchStore({ bucket: account.bucket, aws: account.aws, worker, classify }),
    commitQueue: new SimCommitQueue({
      queue: account.commits,
      aws: account.aws,
      worker,
      classify,
      faulty: options.faulty,
    }),
    events: new SimEventPublisher({ bus: account.bus, aws: account.aws, worker, classify }),
    sleep,
    random,
  };
}

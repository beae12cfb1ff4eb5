// Every store that creates an S3 object with `If-None-Match: *` reads S3's answers one way
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html): 412 Precondition Failed is
// "the key exists"; 409 ConditionalRequestConflict is "a concurrent conditional write to the key, retry",
// which says nothing about whether the key exists yet. The adapters and the simulation's fakes alike, so the
// simulation cannot copy an adapter's mistake.
import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3DeltaStore } from '../../../../shared/bronze/aws/s3-delta-store.ts';
import { S3BatchStore } from '../../../../shared/ingestion/aws/s3-batch-store.ts';
import type { Manifest } from '../../../../shared/ingestion/manifest.ts';
import { DefiniteFailureError, UnknownOutcomeError } from '../../../../shared/kernel/errors.ts';
import type { PutIfAbsentResult } from '../../../../shared/kernel/put-if-absent.ts';
import { SimDeltaStore } from '../../../sim/fakes/bronze.ts';
import { S3Bucket, SimBatchStore } from '../../../sim/fakes/s3.ts';
import { Aws, NO_FAULTS, sdkError } from '../../../sim/faults.ts';
import { Rng, Scheduler, Worker } from '../../../sim/scheduler.ts';

const manifest: Manifest = {
  table: 't',
  version: 1,
  committedAt: '2026-12-01T00:00:00.000Z',
  batchIds: ['B1'],
  fileCount: 0,
  bytes: 0,
  files: [],
  entries: [],
};

/** S3 answering each conditional put with the next error of `answers` (undefined: 200, the put applied). */
type Answers = Array<Error | undefined>;

/** A store's put-if-absent over an S3 that gives `answers` in turn, and what the store saw of them. */
type Store = (answers: Answers) => { put: () => Promise<PutIfAbsentResult>; created: () => number };

function s3Client(answers: Answers) {
  let created = 0;
  const client = {
    send: async () => {
      const answer = answers.shift();
      if (answer) throw answer;
      created += 1;
      return {};
    },
  } as unknown as S3Client;
  return { client, created: () => created };
}

/** The simulation's bucket, answering conditional puts from `answers` before its own state. */
function simBucket(answers: Answers) {
  const scheduler = new Scheduler(new Rng(1));
  const bucket = new S3Bucket(scheduler);
  const put = bucket.put.bind(bucket);
  bucket.put = (key, body, ifNoneMatch, by) => {
    const answer = ifNoneMatch ? answers.shift() : undefined;
    if (answer) throw answer;
    put(key, body, ifNoneMatch, by);
  };
  const ctx = { aws: new Aws(scheduler, new Rng(2), NO_FAULTS), worker: new Worker('w', 0, scheduler) };
  /** Runs a call to its end on the simulated clock. */
  const run = async <T>(call: Promise<T>): Promise<T> => {
    let outcome: { value: T } | { error: unknown } | undefined;
    call.then(
      (value) => {
        outcome = { value };
      },
      (error) => {
        outcome = { error };
      },
    );
    while (!outcome && (await scheduler.step()));
    if (!outcome) throw new Error('the call never settled');
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
  return { bucket, ctx, run, created: () => bucket.objects.size };
}

const STORES: Record<string, Store> = {
  'S3BatchStore (manifests)': (answers) => {
    const s3 = s3Client(answers);
    const store = new S3BatchStore({ client: s3.client, bucket: 'b' });
    return { put: () => store.putManifestIfAbsent(manifest), created: s3.created };
  },
  'S3DeltaStore (Delta log entries)': (answers) => {
    const s3 = s3Client(answers);
    const store = new S3DeltaStore(s3.client, 'b', 't/_bronze');
    return { put: () => store.putCommitIfAbsent(0, '{}'), created: s3.created };
  },
  'SimBatchStore (the simulation)': (answers) => {
    const sim = simBucket(answers);
    const store = new SimBatchStore({ ...sim.ctx, bucket: sim.bucket });
    return { put: () => sim.run(store.putManifestIfAbsent(manifest)), created: sim.created };
  },
  'SimDeltaStore (the simulation)': (answers) => {
    const sim = simBucket(answers);
    const store = new SimDeltaStore({ ...sim.ctx, bucket: sim.bucket, prefix: 't/_bronze' });
    return { put: () => sim.run(store.putCommitIfAbsent(0, '{}')), created: sim.created };
  },
};

const conflict = () => sdkError('ConditionalRequestConflict', 409);
const exists = () => sdkError('PreconditionFailed', 412);

describe.each(Object.entries(STORES))('%s put-if-absent', (_name, store) => {
  it('reads a 409 as a conflict to retry, and the retry that succeeds as created', async () => {
    const s = store([conflict()]);
    expect(await s.put()).toBe('conflict');
    expect(s.created()).toBe(0);
    expect(await s.put()).toBe('created');
    expect(s.created()).toBe(1);
  });

  it('reads a 412 as exists', async () => {
    expect(await store([exists()]).put()).toBe('exists');
  });

  it('classifies anything else as every S3 call is: a request timeout may have been applied, a 403 was not', async () => {
    await expect(store([sdkError('RequestTimeout', 400)]).put()).rejects.toBeInstanceOf(UnknownOutcomeError);
    await expect(store([sdkError('AccessDenied', 403)]).put()).rejects.toBeInstanceOf(DefiniteFailureError);
  });
});

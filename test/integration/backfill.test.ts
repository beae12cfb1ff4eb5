import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetFunctionConfigurationCommand, UpdateFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import {
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { DescribeStateMachineCommand } from '@aws-sdk/client-sfn';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../local/aws/queue-depth.ts';
import { accessDenied } from '../../local/iam/denied.ts';
import { bringUpLocalStack, type LocalStack } from '../../local/local-stack.ts';
import { projectRoot } from '../../local/paths.ts';
import type { LocalRunner } from '../../local/runner.ts';
import { StepFunctionsExecutor } from '../../local/step-functions/executor.ts';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import type { ObjectRef } from '../../shared/ingestion/model.ts';
import { METRIC } from '../../shared/kernel/metrics.ts';
import { ENV, OUTPUTS, RETRYABLE_ERRORS } from '../../shared/kernel/names.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { s3Notification } from '../support/events.ts';
import { type FaultProxy, type ProxiedRequest, slowDown } from '../support/fault-proxy.ts';
import { waitForLambdaRuntime } from '../support/lambda-runtime.ts';
import { startTestRunner, type TestRunner } from '../support/local-runner.ts';
import { type DescribedExecution, errorMessage, historyOf, startAndWait } from '../support/step-functions.ts';

const target = testTarget();
// The runtime the bundles run under: `npm test` may still be building it (test/support/lambda-runtime.ts).
await waitForLambdaRuntime();
const clients = testClients();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const region = 'us-east-1';

/**
 * The backfill state machine as CDK synthesizes it, deployed to the emulator through CloudFormation and
 * started, followed and read through Step Functions' API, as any client would; local mode's executor runs
 * each execution in the ASL interpreter, its tasks invoking the backfill function's bundle under the Lambda
 * runtime, next to the batcher and committer bundles (LocalRunner), each calling AWS as its role. Small steps
 * (2 pages) and short executions (3 steps) so continue-as-new happens.
 */
describe.skipIf(target.kind !== 'emulator')(
  'backfill, reprocess and reconcile (Step Functions, executed)',
  () => {
    let stack: LocalStack;
    let runner: LocalRunner;
    let bucket: string;
    let queueUrl: string;
    let local: TestRunner;
    let iam: TestRunner['iam'];
    /** Between the backfill function's process and AWS: what a test makes AWS answer it. */
    let faults: FaultProxy;

    /** Local mode's executor: its tasks invoke the functions the runner hosts. */
    const executor = () =>
      new StepFunctionsExecutor({
        clients,
        endpoint,
        region,
        stackName: stack.stackName,
        invoker: runner.host,
        pollMs: 100,
        retryIntervalMs: 20,
        // The state machine invokes the function and continues as new as its role.
        ...(iam ? { iam } : {}),
      });

    /**
     * Runs a whole backfill (every continuation) as a client does: StartExecution, then DescribeExecution
     * until the last continuation ends, while an executor runs it. The last execution, and the chain.
     */
    async function run(
      input: Record<string, unknown>,
      fault?: FaultProxy['fault'],
    ): Promise<{ chain: DescribedExecution[]; last: DescribedExecution }> {
      const running = executor();
      faults.fault = fault;
      await running.start();
      try {
        const chain = await startAndWait(
          clients.sfn,
          stack.outputs[OUTPUTS.backfillStateMachine] ?? '',
          uniqueName('bf'),
          input,
        );
        return { chain, last: chain.at(-1) as DescribedExecution };
      } finally {
        faults.fault = undefined;
        await running.stop();
      }
    }

    async function put(keys: readonly string[], body = 'x'): Promise<void> {
      const limit = pLimit(24);
      await Promise.all(
        keys.map((Key) =>
          limit(() => clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: body }))),
        ),
      );
    }

    /** History: objects whose S3 events never reach Inlet (before it existed, or lost). */
    async function withoutEvents<T>(fn: () => Promise<T>): Promise<T> {
      const { $metadata: _, ...configuration } = await clients.s3.send(
        new GetBucketNotificationConfigurationCommand({ Bucket: bucket }),
      );
      await clients.s3.send(
        new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: {} }),
      );
      try {
        return await fn();
      } finally {
        await clients.s3.send(
          new PutBucketNotificationConfigurationCommand({
            Bucket: bucket,
            NotificationConfiguration: configuration,
          }),
        );
      }
    }

    const putWithoutEvents = (keys: readonly string[]) => withoutEvents(() => put(keys));

    /** LastModified (epoch ms) of every object under `prefix`, as a listing reports it. */
    async function lastModified(prefix: string): Promise<number[]> {
      const times: number[] = [];
      for await (const page of paginateListObjectsV2(
        { client: clients.s3 },
        { Bucket: bucket, Prefix: prefix },
      ))
        for (const object of page.Contents ?? []) times.push(object.LastModified?.getTime() ?? 0);
      return times;
    }

    /** Polls a condition (a clock, here) instead of sleeping a fixed time. */
    async function until(condition: () => boolean): Promise<void> {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
    }

    /** Every key in the table's manifests, with how many manifests name it; versions must be 1..N. */
    async function manifestKeys(table: string): Promise<Map<string, number>> {
      const versions = await runner.store.listManifestVersions(table);
      expect(versions).toEqual(versions.map((_, i) => i + 1));
      const counts = new Map<string, number>();
      for (const version of versions) {
        const manifest = await runner.store.getManifest(table, version);
        for (const file of manifest?.files ?? []) counts.set(file.key, (counts.get(file.key) ?? 0) + 1);
      }
      return counts;
    }

    function expectExactlyOnce(counts: Map<string, number>, keys: readonly string[]): void {
      const missing = keys.filter((k) => !counts.has(k));
      const twice = [...counts].filter(([, n]) => n > 1).map(([k]) => k);
      expect({
        missing: missing.slice(0, 5),
        missingCount: missing.length,
        twice: twice.slice(0, 5),
      }).toEqual({
        missing: [],
        missingCount: 0,
        twice: [],
      });
    }

    const output = (execution: DescribedExecution) => execution.output as BackfillSummary;

    beforeAll(async () => {
      stack = await bringUpLocalStack(clients, {
        'inlet:stackName': uniqueName('InletBackfill'),
        'inlet:tables': [
          { name: 'orders', prefix: 'orders/' },
          // The reprocess target: same files, its own ledger namespace and manifests, no live events.
          { name: 'orders_v2', prefix: 'orders/', live: false },
          { name: 'clicks', prefix: 'clicks/', suffix: '.json' },
          // Identity includes the versionId: the backfill must list versions to match live events.
          { name: 'versioned', prefix: 'versioned/', allowOverwrites: true },
        ],
        // Lambda takes batches of up to 10 without a batching window (above 10 it needs one of at least 1 s):
        // a test that puts a handful of files has them claimed at once, not after waiting out the window for
        // records that never come. The claims race the backfill the same way whatever the batch size.
        'inlet:batchSize': 10,
        'inlet:backfillPagesPerStep': 2,
        'inlet:backfillStepsPerExecution': 3,
      });
      bucket = stack.outputs[OUTPUTS.landingBucket] ?? '';
      queueUrl = stack.outputs[OUTPUTS.ingestQueueUrl] ?? '';
      // The backfill function calls AWS (as its role) through the fault proxy.
      local = await startTestRunner(stack, {
        clients,
        endpoint,
        region,
        faulty: (fn) => fn.role === 'Backfill',
      });
      ({ runner, faults, iam } = local);
    }, 180_000);

    afterAll(async () => {
      await local?.stop();
    });

    /** Sets backfill function environment variables (as an operator would) for the duration of `fn`. */
    async function withBackfillEnvironment<T>(
      vars: Record<string, string>,
      fn: () => Promise<T>,
    ): Promise<T> {
      const { definition } = await clients.sfn.send(
        new DescribeStateMachineCommand({
          stateMachineArn: stack.outputs[OUTPUTS.backfillStateMachine] ?? '',
        }),
      );
      const FunctionName = /"FunctionName":"([^"]+)"/.exec(definition ?? '')?.[1] ?? '';
      const before = (await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName })))
        .Environment?.Variables;
      const set = (Variables: Record<string, string>) =>
        clients.lambda.send(
          new UpdateFunctionConfigurationCommand({ FunctionName, Environment: { Variables } }),
        );
      await set({ ...before, ...vars });
      try {
        return await fn();
      } finally {
        await set({ ...before });
      }
    }

    it('backfills 240 existing objects in pages of 5 while live events arrive for some of them: each file in exactly one manifest', async () => {
      const history = Array.from(
        { length: 240 },
        (_, i) => `orders/2025/${String(i % 12).padStart(2, '0')}/part-${String(i).padStart(5, '0')}.json`,
      );
      const fresh = Array.from({ length: 20 }, (_, i) => `orders/2026/new-${i}.json`);
      const t0 = Date.now();
      await putWithoutEvents(history);
      const t1 = Date.now();

      // 5 keys a listing page (INLET_BACKFILL_PAGE_SIZE), 2 pages a step, 3 steps an execution shared by
      // the 12 folder partitions (one step each): 20 keys a folder take 3 steps (the third sees the next
      // folder's first key), so the run continues as new, as a bucket 200 times larger would with 1,000-key
      // pages. The size of a page, not the number of objects, is what the run's shape depends on: this run
      // has the shape 480 objects in pages of 10 had, for half the uploads and claims.
      const { chain, last, live } = await withBackfillEnvironment(
        { [ENV.backfillPageSize]: '5' },
        async () => {
          const live = (async () => {
            // While the backfill lists: 19 of the same objects rewritten (live events for files the backfill
            // also enqueues) and 20 new ones.
            await put(history.filter((_, i) => i % 13 === 3));
            await put(fresh);
          })();
          return { ...(await run({ table: 'orders' })), live };
        },
      );
      await live;
      const t2 = Date.now();
      await runner.untilQuiet(undefined, 8 * 60_000);
      // Where the time goes on the emulator (moto: ~175 PutObject/s, ~170 conditional PutItem/s).
      console.info(
        `240-object backfill: history upload ${t1 - t0} ms, backfill + live ${t2 - t1} ms, ingestion drained ${Date.now() - t2} ms`,
      );

      expect(last.status).toBe('SUCCEEDED');
      // Every partition took more steps than an execution gives it: the run continued as new executions.
      expect(chain.length).toBeGreaterThanOrEqual(3);
      // Each one's output names the next (continue-as-new), which the next describes as its own ARN.
      chain.slice(0, -1).forEach((r, i) => {
        expect(r.status).toBe('SUCCEEDED');
        expect((r.output as { continuedAs?: string }).continuedAs).toBe(chain[i + 1]?.executionArn);
      });
      const summary = output(last);
      expect(summary.complete).toBe(true);
      expect(summary.executions).toBe(chain.length);
      expect(summary.listed).toBeGreaterThanOrEqual(history.length);
      expect(summary.matched).toBe(summary.listed);
      expect(summary.enqueued + summary.alreadyIngested).toBe(summary.matched);

      const counts = await manifestKeys('orders');
      const expected = [...history, ...fresh];
      expectExactlyOnce(counts, expected);
      expect(counts.size).toBe(expected.length);
      // The reprocess target is not live and was not backfilled: nothing went there.
      expect(await runner.store.listManifestVersions('orders_v2')).toEqual([]);

      // A second backfill of the same range finds everything in the ledger and enqueues nothing.
      const folder = history.filter((k) => k.startsWith('orders/2025/00/')).length;
      const again = output((await run({ table: 'orders', prefix: 'orders/2025/00/' })).last);
      expect(again).toMatchObject({ listed: folder, matched: folder, enqueued: 0, alreadyIngested: folder });
    }, 600_000);

    it("path identity (allowOverwrites off): a key written twice is one file, with the first claimed event's metadata", async () => {
      const key = 'orders/twice/a.json';
      await put([key], 'first');
      await runner.untilQuiet();
      await put([key], 'second, longer');
      await runner.untilQuiet();

      const named: ObjectRef[] = [];
      for (const version of await runner.store.listManifestVersions('orders')) {
        const manifest = await runner.store.getManifest('orders', version);
        named.push(...(manifest?.files ?? []).filter((f) => f.key === key));
      }
      // The claim is written once, by the first event; the rewrite's event is a duplicate of it, so the
      // manifest keeps the first write's size and eTag (its entries url still loads the current object).
      expect(named).toHaveLength(1);
      expect(named[0]).toMatchObject({
        size: 'first'.length,
        eTag: createHash('md5').update('first').digest('hex'),
      });
      // The backfill agrees: the path is in the ledger, nothing to enqueue.
      const again = output((await run({ table: 'orders', prefix: 'orders/twice/' })).last);
      expect(again).toMatchObject({ listed: 1, matched: 1, enqueued: 0, alreadyIngested: 1 });
    }, 120_000);

    it('a dry run lists, filters and checks the ledger, and changes nothing', async () => {
      const keys = Array.from({ length: 30 }, (_, i) => `clicks/dry/${i}.json`);
      await putWithoutEvents([...keys, 'clicks/dry/skip.csv']);
      await runner.untilQuiet();
      const { last } = await run({ table: 'clicks', prefix: 'clicks/dry/', dryRun: true });
      expect(output(last)).toMatchObject({
        listed: 31,
        matched: 30,
        enqueued: 0,
        wouldEnqueue: 30,
        alreadyIngested: 0,
        dryRun: true,
      });
      expect(await queueDepth(clients.sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
      await runner.untilQuiet();
      expect(
        await runner.ledger.knownIdentities(
          'clicks',
          keys.map((k) => `${bucket}#-#${k}`),
        ),
      ).toEqual(new Set());
    });

    it('filters by time range and glob, on top of the table routing', async () => {
      const old = Array.from({ length: 10 }, (_, i) => `clicks/range/old-${i}.json`);
      const recent = Array.from(
        { length: 10 },
        (_, i) => `clicks/range/${i % 2 ? 'eu' : 'us'}/new-${i}.json`,
      );
      await putWithoutEvents(old);
      // The boundary is taken from what S3 lists, as the backfill compares: every old object before it,
      // every recent one at or after it. LastModified may have whole seconds only, so the recent ones are
      // written once the clock has passed the old ones' second.
      const newestOld = Math.max(...(await lastModified('clicks/range/old-')));
      await until(() => Date.now() >= Math.floor(newestOld / 1000) * 1000 + 1000);
      await putWithoutEvents(recent);
      const oldestRecent = Math.min(
        ...(await lastModified('clicks/range/us/')),
        ...(await lastModified('clicks/range/eu/')),
      );
      expect(oldestRecent).toBeGreaterThan(newestOld);
      const between = new Date(oldestRecent).toISOString();

      const inRange = await run({ table: 'clicks', prefix: 'clicks/range/', modifiedAfter: between });
      expect(output(inRange.last)).toMatchObject({ listed: 20, matched: 10, enqueued: 10 });
      const before = await run({
        table: 'clicks',
        prefix: 'clicks/range/',
        modifiedBefore: between,
        glob: 'clicks/range/old-[0-4].json',
      });
      expect(output(before.last)).toMatchObject({ listed: 20, matched: 5, enqueued: 5 });
      await runner.untilQuiet();
      const counts = await manifestKeys('clicks');
      expectExactlyOnce(counts, [...recent, ...old.slice(0, 5)]);
      for (const key of old.slice(5)) expect(counts.has(key)).toBe(false);
    });

    it('retries a throttled step with backoff and finishes with exact counts', async () => {
      // Pages of 50 (INLET_BACKFILL_PAGE_SIZE): 120 keys are three pages, two steps, as 1,200 are with 500.
      const keys = Array.from(
        { length: 120 },
        (_, i) => `clicks/throttle/${String(i).padStart(4, '0')}.json`,
      );
      await putWithoutEvents(keys);
      // S3 answers SlowDown to every attempt of the function's first two listings (ListObjectsV2 of the
      // prefix, not its partitions' CommonPrefixes): the SDK retries each as a throttle, gives up after its
      // attempts, the function reports the step throttled, the state machine's Retry takes over with backoff
      // and the step runs again from its cursor.
      const listings: string[] = [];
      const throttled = (request: ProxiedRequest) => {
        const query = new URL(request.url, 'http://s3').searchParams;
        if (request.service !== 's3' || query.get('list-type') !== '2' || query.has('delimiter')) return;
        if (query.get('prefix') !== 'clicks/throttle/') return;
        if (!listings.includes(request.call)) listings.push(request.call);
        return listings.indexOf(request.call) < 2 ? slowDown() : undefined;
      };
      const { chain, last } = await withBackfillEnvironment({ [ENV.backfillPageSize]: '50' }, () =>
        run({ table: 'clicks', prefix: 'clicks/throttle/' }, throttled),
      );
      expect(last.status).toBe('SUCCEEDED');
      // Each retry is in the history as the task's failure, then the task scheduled again.
      const failures = [];
      for (const execution of chain)
        for (const event of await historyOf(clients.sfn, execution.executionArn))
          if (event.type === 'TaskFailed') failures.push(event.taskFailedEventDetails?.error);
      expect(failures).toEqual([RETRYABLE_ERRORS.throttled, RETRYABLE_ERRORS.throttled]);
      expect(listings.length).toBeGreaterThanOrEqual(2 + 3);
      expect(output(last)).toMatchObject({
        listed: keys.length,
        matched: keys.length,
        enqueued: keys.length,
        alreadyIngested: 0,
      });
      await runner.untilQuiet();
      expectExactlyOnce(await manifestKeys('clicks'), keys);
    }, 300_000);

    it('reports a step that keeps failing with its resume point, and a resumed run finishes the job', async () => {
      // Pages of 20 (INLET_BACKFILL_PAGE_SIZE), 2 a step: the first step enqueues 40, the second fails on the
      // third page (its first send), leaving 10, as 2,100 keys in pages of 1,000 would.
      const keys = Array.from({ length: 50 }, (_, i) => `clicks/fail/${String(i).padStart(4, '0')}.json`);
      await putWithoutEvents(keys);
      // SQS refuses every message holding one of the last ten keys (the third page's): AccessDenied, which the
      // SDK does not retry, as when the queue's policy or the role changed mid-run.
      const denied = (request: ProxiedRequest) =>
        request.service === 'sqs' && keys.slice(40).some((k) => request.body.includes(k))
          ? accessDenied(
              'sqs',
              { method: request.method, json: Boolean(request.headers['x-amz-target']) },
              'User: backfill is not authorized to perform: sqs:SendMessage (a test fault)',
              'fault',
            )
          : undefined;
      const { failed, resumed } = await withBackfillEnvironment(
        { [ENV.backfillPageSize]: '20' },
        async () => {
          const failed = await run({ table: 'clicks', prefix: 'clicks/fail/' }, denied);
          const cause = JSON.parse(failed.last.cause ?? '{}');
          const resumed = await run({
            table: 'clicks',
            prefix: 'clicks/fail/',
            startAfter: cause.summary?.lastKey,
          });
          return { failed, resumed };
        },
      );
      expect(failed.last.status).toBe('FAILED');
      // Not a throttle: reported at once, with the totals and the last key whose page was fully enqueued.
      expect(failed.last.error).toBe('DefiniteFailureError');
      const cause = JSON.parse(failed.last.cause ?? '{}');
      // The failed task's cause: Lambda's error document for the function error.
      expect(errorMessage(cause.failure.Cause)).toMatch(/failed: AccessDenied: .*a test fault/);
      expect(cause.summary).toMatchObject({ listed: 40, enqueued: 40, complete: false });
      expect(cause.summary.lastKey).toBe(keys[39]);
      // Resumed from the printed key: only what was left.
      expect(output(resumed.last)).toMatchObject({ listed: 10, enqueued: 10, complete: true });
      await runner.untilQuiet();
      expectExactlyOnce(await manifestKeys('clicks'), keys);
    }, 300_000);

    it('reprocesses into a new table: its own versions from 1, the old table untouched', async () => {
      const keys = Array.from({ length: 40 }, (_, i) => `orders/reprocess/${i}.json`);
      await put(keys); // live events: ingested into orders (live), not orders_v2
      await runner.untilQuiet();
      const ordersBefore = await runner.store.listManifestVersions('orders');
      expectExactlyOnce(await manifestKeys('orders'), keys);

      const { last } = await run({ table: 'orders_v2', prefix: 'orders/reprocess/' });
      expect(output(last)).toMatchObject({ listed: 40, matched: 40, enqueued: 40, alreadyIngested: 0 });
      await runner.untilQuiet();
      const v2 = await manifestKeys('orders_v2');
      expectExactlyOnce(v2, keys);
      expect(v2.size).toBe(40);
      expect(await runner.store.listManifestVersions('orders')).toEqual(ordersBefore);
    });

    it('reconcile enqueues only the files the ledger never saw, and counts them', async () => {
      const seen = Array.from({ length: 10 }, (_, i) => `clicks/reconcile/seen-${i}.json`);
      const lost = Array.from({ length: 15 }, (_, i) => `clicks/reconcile/lost-${i}.json`);
      await put(seen);
      await runner.untilQuiet();
      await putWithoutEvents(lost);
      const missingBefore = runner.metrics.totals.get(METRIC.reconcileMissing) ?? 0;

      const { last } = await run({
        table: 'clicks',
        prefix: 'clicks/reconcile/',
        mode: 'reconcile',
        lookbackSeconds: 3600,
        settleSeconds: 0,
      });
      expect(output(last)).toMatchObject({
        mode: 'reconcile',
        listed: 25,
        enqueued: 15,
        alreadyIngested: 10,
      });
      // From the backfill function's EMF log lines, as CloudWatch would have the metric.
      expect((runner.metrics.totals.get(METRIC.reconcileMissing) ?? 0) - missingBefore).toBe(15);
      await runner.untilQuiet();
      expectExactlyOnce(await manifestKeys('clicks'), [...seen, ...lost]);
    });

    it('in a versioned bucket, an allowOverwrites table: backfilled versions have the identity live events gave them', async () => {
      await clients.s3.send(
        new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
      );
      const putVersion = async (Key: string, Body: string) => {
        const out = await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
        return { key: Key, versionId: out.VersionId ?? '', eTag: (out.ETag ?? '').replace(/"/g, '') };
      };
      // Live: a and b, then a rewritten (a new file under allowOverwrites). moto's notifications omit the
      // versionId that AWS sends for versioned buckets, so these events are sent as AWS would send them.
      const notifications = async (
        objects: ReadonlyArray<{ key: string; versionId: string; eTag: string }>,
      ) => {
        for (const o of objects)
          await clients.sqs.send(
            new SendMessageCommand({
              QueueUrl: queueUrl,
              MessageBody: s3Notification({
                bucket,
                key: o.key,
                versionId: o.versionId,
                eTag: o.eTag,
                size: 2,
              }),
            }),
          );
      };
      const live = await withoutEvents(async () => [
        await putVersion('versioned/a.json', 'a1'),
        await putVersion('versioned/b.json', 'b1'),
        await putVersion('versioned/a.json', 'a2'),
      ]);
      await notifications(live);
      await runner.untilQuiet();
      // c's event was lost.
      const lost = await withoutEvents(() => putVersion('versioned/c.json', 'c1'));

      const { last } = await run({ table: 'versioned' });
      // The latest versions: a2 and b1 were ingested live, c1 was not. a1 is history, not listed.
      expect(output(last)).toMatchObject({ listed: 3, matched: 3, alreadyIngested: 2, enqueued: 1 });
      await runner.untilQuiet();
      const versions = await runner.store.listManifestVersions('versioned');
      const files = [];
      for (const v of versions)
        files.push(...((await runner.store.getManifest('versioned', v))?.files ?? []));
      expect(files.map((f) => `${f.key}@${f.versionId}`).sort()).toEqual(
        [...live, lost].map((o) => `${o.key}@${o.versionId}`).sort(),
      );
    });

    it('rejects bad input with every problem named, before listing anything', async () => {
      const { last } = await run({
        table: 'nope',
        modifiedAfter: 'yesterday',
        lookbackSeconds: 60,
      });
      expect(last.status).toBe('FAILED');
      expect(last.error).toBe('InvalidBackfillInput');
      expect(errorMessage(last.cause)).toMatch(/modifiedAfter: must be an ISO-8601 date/);
      const typo = await run({ table: 'clicks', modifedAfter: '2026-01-01' });
      expect(errorMessage(typo.last.cause)).toMatch(/Unrecognized key: "modifedAfter"/);
      const unknown = await run({ table: 'nope' });
      expect(errorMessage(unknown.last.cause)).toMatch(
        /table: 'nope' is not configured; tables: orders, orders_v2, clicks, versioned/,
      );
    });

    it('the CLI starts a backfill (waiting with progress, or in the background) and reports it from another process', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'inlet-backfill-cli-'));
      const o = stack.outputs;
      writeFileSync(
        join(dir, 'local.json'),
        JSON.stringify({
          endpoint,
          region,
          landingBucket: bucket,
          manifestBucket: o[OUTPUTS.manifestBucket],
          ledgerTable: o[OUTPUTS.ledgerTable],
          ingestQueueUrl: queueUrl,
          tables: stack.tables,
          stackName: stack.stackName,
          ingestDlqUrl: o[OUTPUTS.ingestDlqUrl],
          commitQueueUrl: o[OUTPUTS.commitQueueUrl],
          commitDlqUrl: o[OUTPUTS.commitDlqUrl],
          backfillStateMachineArn: o[OUTPUTS.backfillStateMachine],
        }),
      );
      // The CLI as `npx inlet` runs it: its prebuilt bundle (bin.mjs rebuilds it when a source is newer),
      // not tsx compiling the sources on every start, ~1 s of CPU a call.
      const bin = join(projectRoot, 'cli', 'bin.mjs');
      const options = {
        cwd: projectRoot,
        env: { ...process.env, INLET_STATE_DIR: dir, NODE_NO_WARNINGS: '1' },
        encoding: 'utf8' as const,
        timeout: 120_000,
      };
      /** `inlet ARGS` in the background: the CLI's start-up and its once-a-second polls dominate, so
       *  independent calls overlap. */
      const inlet = (...args: string[]) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          execFile(process.execPath, [bin, ...args], options, (error, stdout, stderr) =>
            resolve({
              status: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
              stdout,
              stderr,
            }),
          );
        });
      // Errors that need no backfill: asked while the rest runs.
      const unknownRun = inlet('backfill', 'status', 'nope');
      const badTableRun = inlet('backfill', 'start', '--table', 'nope');
      // Local mode's executor (npm start runs one): the CLI only starts and reads executions.
      const running = executor();
      await running.start();
      try {
        const keys = Array.from({ length: 12 }, (_, i) => `clicks/cli/${i}.json`);
        // The dry run has keys of its own, so it runs alongside the real one and still sees none ingested.
        const dryKeys = Array.from({ length: 7 }, (_, i) => `clicks/cli-dry/${i}.json`);
        await putWithoutEvents([...keys, ...dryKeys]);
        const start = (prefix: string) => ['backfill', 'start', '--table', 'clicks', '--prefix', prefix];

        const dryRun = inlet(
          '--json',
          ...start('clicks/cli-dry/'),
          '--dry-run',
          '--wait',
          '--name',
          'cli-dry',
        );

        const started = await inlet('--json', ...start('clicks/cli/'), '--name', 'cli-real');
        expect(started.status, started.stderr).toBe(0);
        expect(JSON.parse(started.stdout)).toEqual({
          execution: `${(o[OUTPUTS.backfillStateMachine] ?? '').replace(':stateMachine:', ':execution:')}:cli-real`,
          status: 'RUNNING',
        });
        // An executor runs it: the CLI says nothing of waiting for local mode.
        expect(started.stderr).not.toMatch(/local mode is not running/);
        const done = await inlet('--json', 'backfill', 'status', 'cli-real', '--wait');
        expect(done.status, done.stderr).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({
          status: 'SUCCEEDED',
          summary: { listed: 12, enqueued: 12, complete: true },
        });

        const dry = await dryRun;
        expect(dry.status, dry.stderr).toBe(0);
        expect(JSON.parse(dry.stdout)).toMatchObject({
          status: 'SUCCEEDED',
          summary: { listed: 7, wouldEnqueue: 7, enqueued: 0, dryRun: true },
        });
        const [text] = await Promise.all([inlet('backfill', 'status', 'cli-real'), runner.untilQuiet()]);
        expect(text.stdout).toMatch(
          /cli-real: SUCCEEDED\n {2}listed 12, matched 12, enqueued 12, already ingested 0/,
        );
        const counts = await manifestKeys('clicks');
        expectExactlyOnce(counts, keys);
        expect(dryKeys.filter((k) => counts.has(k))).toEqual([]);

        const unknown = await unknownRun;
        expect(unknown.status).toBe(1);
        // The last line: the CLI may warn first (e.g. about the Node version).
        expect(unknown.stderr.trim().split('\n').at(-1)).toBe("inlet: no backfill execution 'nope'");
        const badTable = await badTableRun;
        expect(badTable.stderr.trim().split('\n').at(-1)).toBe(
          "inlet: unknown table 'nope'; tables: orders, orders_v2, clicks, versioned",
        );
      } finally {
        await running.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);
  },
);

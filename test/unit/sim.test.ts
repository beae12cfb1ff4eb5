import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { applyCommit, emptyLogState } from '../../shared/bronze/log-state.ts';
import {
  classifyAwsError,
  POSSIBLY_APPLIED,
  ThrottledError,
  UnknownOutcomeError,
} from '../../shared/kernel/errors.ts';
import { checkDelta, checkDeltaComplete } from '../sim/bronze-checks.ts';
import { Aws, type SdkError } from '../sim/faults.ts';
import { Rng, Scheduler, Worker } from '../sim/scheduler.ts';
import { type SimOptions, simulate } from '../sim/simulate.ts';
import { VARIANTS, type VariantName } from '../sim/variants.ts';

/** 100 seeds at up to 2 s each (see the variant tests). */
const VARIANT_TIMEOUT_MS = 200_000;

/** The first seed on which the variant breaks the invariant it must break (main's own findings aside). */
async function firstCaught(variant: VariantName, maxSeeds: number, expected: RegExp, signal: AbortSignal) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const result = await simulate({
      seed,
      signal,
      ...(VARIANTS[variant] as Pick<SimOptions, 'plumbing' | 'scenario'>),
    });
    if (expected.test(result.violations.join('\n'))) return result;
  }
  return undefined;
}

describe('the SDK fault model', () => {
  it('applied on attempt 1 behind a 500, throttled after: the write happened, the error is a throttle marked possibly applied', async () => {
    const scheduler = new Scheduler(new Rng(1));
    const rates = { appliedLost: 1, refused5xx: 0, throttled: 0, slow: 0, burst: 1, storms: 0 };
    const aws = new Aws(scheduler, new Rng(2), rates);
    let writes = 0;
    const call = aws.send(new Worker('w', 0, scheduler), 'dynamodb', 'claim', () => {
      writes += 1;
    });
    const settled = call.then(
      () => undefined,
      (error: SdkError) => error,
    );
    while (await scheduler.step());
    const error = await settled;

    expect(writes).toBe(1);
    expect(error?.name).toBe('ProvisionedThroughputExceededException');
    expect(error?.$metadata).toMatchObject({ httpStatusCode: 400, attempts: 4 });
    expect(error?.[POSSIBLY_APPLIED]).toBe(true);
    expect(classifyAwsError('claim', error)).toBeInstanceOf(UnknownOutcomeError);
    const { [POSSIBLY_APPLIED]: _, ...lastAttemptOnly } = error as SdkError;
    expect(
      classifyAwsError('claim', { ...lastAttemptOnly, $metadata: { httpStatusCode: 400 } }),
    ).toBeInstanceOf(ThrottledError);
  });
});

describe('the bronze checks', () => {
  it('see a committed Delta version whose rows change, and a table missing its last version', async () => {
    const { world, violations } = await simulate({ seed: 3 });
    expect(violations).toEqual([]);
    expect(await checkDelta(world)).toEqual([]);
    // Two live files (orphans of abandoned attempts are in no commit: rewriting one changes no reader's rows).
    const state = emptyLogState();
    for (const [key, body] of [...world.bucket.objects].sort(([a], [b]) => a.localeCompare(b))) {
      const match = /^orders\/_bronze\/_delta_log\/(\d{20})\.json$/.exec(key);
      if (match) applyCommit(state, Number(match[1]), body);
    }
    const data = [...state.adds.keys()].map((path) => `orders/_bronze/${path}`);
    expect(data.length).toBeGreaterThan(1);
    const [first, second] = data as [string, string];

    // Another version's rows under this version's file name: the table's rows change under a reader.
    world.bucket.put(first, world.bucket.get(second));
    expect((await checkDelta(world)).join('\n')).toMatch(/^D2: orders data file .* rewritten/m);
    expect((await checkDeltaComplete(world)).join('\n')).toMatch(/^D3: orders holds a row twice/m);

    const commits = [...world.bucket.objects.keys()].filter((k) =>
      /_bronze\/_delta_log\/\d{20}\.json$/.test(k),
    );
    world.bucket.delete(commits.sort().at(-1) as string);
    expect((await checkDeltaComplete(world)).join('\n')).toMatch(
      /^D3: orders has \d+ manifest versions but/m,
    );
  });
});

describe('deterministic simulation', () => {
  it('holds I1-I5 on seeds 1-20: every file committed once, nothing dead-lettered, no table wedged', async ({
    signal,
  }) => {
    for (let seed = 1; seed <= 20; seed++) {
      const result = await simulate({ seed, signal });
      expect(result.violations, `seed ${seed}: npm run test:sim -- --seeds 1 --seed ${seed}`).toEqual([]);
      expect(result.files).toBeGreaterThan(0);
    }
  });

  it('holds with cleanSource on two tables over one prefix and keys rewritten after the sink read them, seeds 1-5', async ({
    signal,
  }) => {
    for (let seed = 1; seed <= 5; seed++) {
      const result = await simulate({ seed, scenario: 'clean', signal });
      expect(result.violations, `npm run test:sim -- --seeds 1 --seed ${seed} --scenario clean`).toEqual([]);
      expect(result.world.removals.length, `seed ${seed} removed nothing`).toBeGreaterThan(0);
    }
  });

  // A seed of this scenario takes about 2 s alone and up to ten times that on a loaded 2-core machine.
  it('holds with two optimizes and a vacuum beside the sink, seeds 1-3 (odd seeds partitioned), and they compact', {
    timeout: VARIANT_TIMEOUT_MS,
  }, async ({ signal }) => {
    let optimizeCommits = 0;
    let partitionedCommits = 0;
    let partitionManifests = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const result = await simulate({ seed, scenario: 'optimize', signal });
      expect(result.violations, `npm run test:sim -- --seeds 1 --seed ${seed} --scenario optimize`).toEqual(
        [],
      );
      for (const [key, body] of result.world.bucket.objects)
        if (key.includes('_delta_log/') && body.includes('"engineInfo":"inlet-bronze-optimize"')) {
          optimizeCommits += 1;
          if (body.includes('"partitionValues":{"n":')) partitionedCommits += 1;
        }
      // The symlink manifests the checks (SL1-SL3) read are there, listing files.
      const manifests = [...result.world.bucket.objects].filter(([key]) =>
        key.includes('/_symlink_format_manifest/'),
      );
      expect(manifests.length, `seed ${seed} has no symlink manifest`).toBeGreaterThan(0);
      expect(manifests.every(([, body]) => body.includes('.parquet\n'))).toBe(true);
      partitionManifests += manifests.filter(([key]) => key.includes('_manifest/n=')).length;
    }
    expect(optimizeCommits).toBeGreaterThan(0);
    expect(partitionedCommits).toBeGreaterThan(0);
    expect(partitionManifests).toBeGreaterThan(1);
  });

  it("stops when its test's signal aborts", async () => {
    const stop = new AbortController();
    // Mid-run: seed 1 takes 200 ms or more cold but can finish in about 200 ms warm (the whole file run), so
    // the abort comes well before any run ends.
    setTimeout(() => stop.abort(new Error('test timed out')), 20);
    const started = Date.now();
    await expect(simulate({ seed: 1, signal: stop.signal })).rejects.toThrow('test timed out');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('runs on its own clock and seed: no code it runs sleeps on a real timer or draws Math.random, and it replaces neither', async ({
    signal,
  }) => {
    // Counted, not replaced by the simulation: a backoff that took either from the process instead of its
    // deps would wait in real time beside the simulated one and make a seed unrepeatable.
    const timers = createRequire(import.meta.url)('node:timers/promises') as { setTimeout: typeof sleep };
    const realSleep = timers.setTimeout;
    const realRandom = Math.random;
    const used = { sleeps: 0, draws: 0, replaced: 0 };
    const countedSleep = ((...args: Parameters<typeof sleep>) => {
      used.sleeps += 1;
      return realSleep(...args);
    }) as typeof sleep;
    const countedRandom = () => {
      used.draws += 1;
      return realRandom();
    };
    timers.setTimeout = countedSleep;
    syncBuiltinESMExports();
    Math.random = countedRandom;
    // The scheduler yields to the event loop every step, so this looks while the simulation runs.
    const watch = setInterval(() => {
      if (timers.setTimeout !== countedSleep || Math.random !== countedRandom) used.replaced += 1;
    }, 1);
    try {
      for (const options of [{ seed: 1 }, { seed: 2 }, { seed: 1, scenario: 'clean' as const }]) {
        const result = await simulate({ ...options, signal });
        expect(result.violations).toEqual([]);
      }
    } finally {
      clearInterval(watch);
      timers.setTimeout = realSleep;
      syncBuiltinESMExports();
      Math.random = realRandom;
    }
    expect(used).toEqual({ sleeps: 0, draws: 0, replaced: 0 });
  });

  it('replays a seed exactly: the same trace step for step', async () => {
    const a = await simulate({ seed: 7 });
    const b = await simulate({ seed: 7 });
    expect(b.trace).toEqual(a.trace);
    expect(b.digest).toBe(a.digest);
    expect(a.trace.some((line) => line.includes('APPLIED+'))).toBe(true);
  });

  // Issue 10 #1 (the review's data loss): a claim applied on attempt 1 behind a 500, the rest throttled, the
  // batch sealed without it. Main 1926630 lost a file on seeds 10, 14 and 28 of the simulator as it was
  // then; main now classifies by every attempt and re-issues unsettled claims, so it takes a throttling
  // storm that outlasts those re-issues to expose a classifier that looks at the last attempt only. These
  // seeds do; if the simulator changes, re-record them from
  // `npm run test:sim -- --seeds 400 --variant old-classification` (re-recorded for group commit, whose
  // group Query changes every schedule: 6/16/19 before; the committer's read retries moved 19 to 164; the
  // bronze sink workers, their queue and their timeouts moved 164/77 to 14/86; the sink's nudge schedule
  // moved 14 to 237; the sink's parts, other Delta writer and per-table backoff moved 86/237 to 2/242; slow
  // seeds in a 35-second sink and a rule losing a fifth of its deliveries moved them to 14/116; the sink's
  // visibility lease, whose beats are calls on the simulated clock, to 151/165; the committer's read ahead of
  // an invocation's requests, one more call per invocation, to 94/220).
  it.each([94, 220])(
    'regression seed %i: a claim applied, then throttled, loses a file under last-attempt classification, not on main',
    async (seed) => {
      const broken = await simulate({ seed, ...VARIANTS['old-classification'] });
      expect(broken.violations.join('\n')).toMatch(/^I2: .* in no manifest .*batch COMMITTED/m);
      const main = await simulate({ seed });
      expect(main.violations).toEqual([]);
    },
  );

  // Found by the simulator on main after issue 10's first fixes: a batch that could not stage or seal (S3
  // throttling) fenced itself and gave its messages back at once, every time, so they spent their ten
  // receives in seconds and went to the DLQ. Now they back off by receive count.
  it.each([223, 278, 397, 511, 589, 168])('regression seed %i: nothing is dead-lettered', async (seed) => {
    const result = await simulate({ seed });
    expect(result.violations, `npm run test:sim -- --seeds 1 --seed ${seed}`).toEqual([]);
  });

  // Found by the simulator on group commit: recovering a grouped version read every batch item and staged
  // list once, and any throttled or lost read failed the FIFO message, which came back after the queue's
  // timeout to fail again, until it went to the DLQ (B0006 on seed 125, B0008 on seed 222). Reads are now
  // retried in the invocation, the reservation carries each batch's staged list key, and a commit that
  // still fails for load gives its message back with a backoff by receive count.
  it.each([125, 222])(
    'regression seed %i: a grouped commit rides out throttled reads, its message never dead-lettered',
    async (seed) => {
      const result = await simulate({ seed });
      expect(result.violations, `npm run test:sim -- --seeds 1 --seed ${seed}`).toEqual([]);
    },
  );

  // Found by the simulator once the bronze sink ran in it: a sink run that ran out of budget before writing a
  // version nudged the table with MessageDeduplicationId `<table>-continue-<cursor>`, the id the run before it
  // had used; the FIFO queue dropped it as a duplicate and the table stayed behind until its next commit
  // (seed 621: Delta 6 of 7). Production reaches it when one invocation's batch holds several tables and the
  // first uses up the budget. A nudge's id now names the message whose run sends it.
  it.each([621])(
    'regression seed %i: a sink run that wrote nothing still gets its nudge through',
    async (seed) => {
      const result = await simulate({ seed });
      expect(result.violations, `npm run test:sim -- --seeds 1 --seed ${seed}`).toEqual([]);
    },
  );

  // The rule's delivery of a BatchCommitted to the sink queue can fail for good (its DLQ); the simulation
  // loses a fifth of them while faults run. Seed 1 loses orders' last trigger: without the nudge schedule
  // the Delta table ends behind its manifests, with it the next nudge catches it up (seed 21 before the
  // sink's visibility lease changed the schedules, 24 before the sink's parts and other Delta writer did, 50
  // before the loss rate went from 10% to 20%).
  it.each([1])(
    'regression seed %i: a lost last trigger leaves the table behind without the schedule, not with it',
    async (seed) => {
      const broken = await simulate({ seed, ...VARIANTS['no-sink-schedule'] });
      expect(broken.violations.join('\n')).toMatch(
        /^D3: orders has \d+ manifest versions but its Delta table is at/m,
      );
      const main = await simulate({ seed });
      expect(main.world.lastTriggerLost).toBe(true);
      expect(main.violations, `npm run test:sim -- --seeds 1 --seed ${seed}`).toEqual([]);
    },
  );

  // The sink holds its messages with a visibility lease; when its heartbeat is lost (every beat, or half of
  // them), the lease lapses and a second sink runs the table while the first still writes: the write path
  // must keep it exactly once. The overlaps are counted, so the case cannot silently stop happening.
  it.for(['lost', 'flaky'] as const)(
    'holds with the sink heartbeat %s: two sinks on one table at once, seeds 1-8',
    async (sinkHeartbeat, { signal }) => {
      let overlaps = 0;
      for (let seed = 1; seed <= 8; seed++) {
        const result = await simulate({ seed, signal, plumbing: { sinkHeartbeat } });
        expect(
          result.violations,
          `npm run test:sim -- --seeds 1 --seed ${seed} --heartbeat ${sinkHeartbeat}`,
        ).toEqual([]);
        overlaps += result.world.sinkOverlaps;
      }
      expect(overlaps).toBeGreaterThan(0);
    },
  );

  // A simulator that passes broken code is a defect: each variant breaks one rule of the protocol. (The
  // first, last-attempt classification, is caught by the regression seeds above: its first seed is 151.)
  it.for([
    { variant: 'ack-busy', expected: /^I2: /m, bound: 100 },
    { variant: 'seal-unknown', expected: /^I2: .*batch COMMITTED/m, bound: 100 },
    // Main now checks the manifest ahead of the head before reserving, so a second reservation for a
    // committed batch mostly wedges its table (the pending version can never finalize) instead of forking it.
    {
      variant: 'no-sealed-check',
      expected: /^(I1: .* committed 2 times|I5: TABLE#.* keeps pending)/m,
      bound: 100,
    },
    // The bronze sink's cursor moved before its Delta commit: a failed or crashed put leaves the cursor
    // ahead of the log (the table stops) or counts a commit twice.
    {
      variant: 'sink-cursor-first',
      expected: /^(D3: orders (sink cursor|has \d+ manifest versions)|stuck)/m,
      bound: 100,
    },
    // The Delta commit as a plain put (Spark's default S3 LogStore): racing writers overwrite a log entry.
    { variant: 'sink-plain-put', expected: /^D2: orders Delta log entry \d+ rewritten/m, bound: 100 },
    // No nudge schedule: a table whose last trigger was lost is never caught up.
    { variant: 'no-sink-schedule', expected: /^D3: orders has \d+ manifest versions/m, bound: 100 },
    // The sink as its table's only writer (review F12): another writer's commit stops the table for good.
    { variant: 'sink-single-writer', expected: /^(stuck|D3|I5)/m, bound: 100 },
    // Data file names the same on every attempt (review F11): a committed file is overwritten.
    {
      variant: 'sink-reused-names',
      expected: /^D2: orders data file .* rewritten with other bytes/m,
      bound: 100,
    },
    // A part that ran out of time is started over whole (review F2): a slow seed's table never moves again.
    { variant: 'sink-no-shrink', expected: /^stuck/m, bound: 100 },
    // cleanSource by key (main before issue 20): a rewrite made after the sink read the key is destroyed.
    {
      variant: 'clean-by-key',
      expected: /^C1: cleanSource removed a write of .* that no table read/m,
      bound: 20,
    },
    // cleanSource that does not wait for the other table over the prefix: that table finds files gone.
    { variant: 'clean-without-waiting', expected: /^D[23]: (orders|audit) .* has 0 rows/m, bound: 20 },
    // Optimize stepping over a version that removed its inputs: two optimizes add the same rows twice.
    { variant: 'optimize-no-conflict-check', expected: /^O-I1: /m, bound: 40 },
    // Vacuum taking an upload not yet committed for an old orphan: a commit names a deleted file.
    { variant: 'vacuum-ageless', expected: /^(O-I2|V-I1): /m, bound: 40 },
    // Vacuum before the symlink manifests list the head: a manifest still lists a file optimize removed.
    { variant: 'vacuum-before-manifests', expected: /^SL2: /m, bound: 10 },
  ] as const)(
    'catches the broken variant $variant within $bound seeds',
    // The bound is what the test asserts; the time only has to hold it. A seed takes about 0.5 s alone and
    // up to four times that on a loaded 2-core machine, and a variant may take most of its seeds: ack-busy
    // was caught at seed 39 (3 in 100 seeds; 6 in 100 on main before the sink's parts and other writer), and
    // at seed 1 since the sink's visibility lease changed the schedules (6 in 100).
    { timeout: VARIANT_TIMEOUT_MS },
    async ({ variant, expected, bound }, { signal }) => {
      const result = await firstCaught(variant, bound, expected, signal);
      expect(result, `${variant} passed ${bound} seeds`).toBeDefined();
    },
  );
});

/**
 * One seed, start to end: S3 events arrive (duplicated, late, out of order, some malformed) while
 * batchers, committers and a sweeper run on faulty AWS; then faults stop, time runs on until the pipeline
 * is quiet, and the end state must satisfy I2/I5. I1/I3 are checked after every step.
 */
import { createHash } from 'node:crypto';
import { Router } from '../../shared/ingestion/routing.ts';
import { s3Record } from '../support/events.ts';
import { checkDelta, checkDeltaComplete, landingBody } from './bronze-checks.ts';
import { checkLiveness, checkSafety, type Expected, wedged } from './checks.ts';
import { checkCleanComplete, checkCleanSafety } from './clean-checks.ts';
import { etagOf } from './fakes/landing.ts';
import { checkMaintenance } from './optimize-checks.ts';
import { Rng } from './scheduler.ts';
import { checkSymlinkComplete, checkSymlinkSafety } from './symlink-checks.ts';
import { Fleet, type Role } from './workers.ts';
import { type Plumbing, type Scenario, World } from './world.ts';

export interface Workers {
  readonly batchers: number;
  readonly committers: number;
  readonly sweepers: number;
  /** Bronze sink instances polling the sink queue (FIFO keeps them apart, a redelivery does not). */
  readonly sinks: number;
}

export interface SimOptions {
  readonly seed: number;
  readonly workers?: Workers;
  readonly plumbing?: Plumbing;
  /** Simulated time allowed after the faults stop before an unfinished pipeline counts as stuck. */
  readonly settleMs?: number;
  /** `clean`: two bronze tables over one prefix with cleanSource, and landing keys rewritten (world.ts). */
  readonly scenario?: Scenario;
  /**
   * Stops the run (it throws) once aborted. A test that timed out is abandoned by the runner, not stopped:
   * its simulation would go on stepping beside the next files of the same worker.
   */
  readonly signal?: AbortSignal;
}

export interface SimResult {
  readonly seed: number;
  readonly violations: string[];
  readonly trace: readonly string[];
  readonly steps: number;
  readonly simSeconds: number;
  /** SHA-256 over every trace line, the step count and the end time: equal for two runs of one seed. */
  readonly digest: string;
  readonly files: number;
  /** The end state, for tests that check the checks. */
  readonly world: World;
}

export const DEFAULT_WORKERS: Workers = { batchers: 3, committers: 3, sweepers: 1, sinks: 2 };
const FAULT_PHASE_MS = 400_000;

interface Injection {
  readonly at: number;
  readonly body: string;
  readonly malformed?: boolean;
  /** A producer's write of a landing key, made just before its event is sent. */
  readonly write?: { readonly key: string; readonly content: string };
}

/** The S3 events of one seed, and what they oblige the pipeline to do. */
function plan(world: World): { injections: Injection[]; expected: Expected } {
  const { rng } = world;
  const router = new Router(world.config);
  const expected: Expected = { files: new Set(), quarantined: new Set() };
  const records: Array<{ at: number; record: object }> = [];
  const files = rng.int(6, 24);
  for (let i = 0; i < files; i++) {
    const key = `${rng.chance(0.5) ? 'orders' : 'logs'}/f${i}.json`;
    const body = landingBody(rng, i);
    world.landing.put(key, body);
    const at = rng.int(0, 120_000);
    const record = s3Record({
      key,
      size: rng.int(1, 5000),
      // S3's ETag of a single-part upload: its content's MD5, bare in events.
      eTag: etagOf(body).slice(1, -1),
      eventTime: new Date(at).toISOString(),
    });
    records.push({ at, record });
    // S3 delivers at least once: a duplicate may come much later, after the file is committed.
    if (rng.chance(0.25)) records.push({ at: at + rng.int(0, 300_000), record });
    const routed = router.route({
      bucket: 'landing',
      key,
      size: 1,
      eTag: null,
      versionId: null,
      sequencer: null,
      eventTime: '',
    });
    if (routed.kind === 'routed')
      for (const f of routed.files) expected.files.add(`${f.table}#${f.identity}`);
  }
  rng.shuffle(records);
  const injections: Injection[] = [];
  for (let i = 0; i < records.length; ) {
    // Mostly one record per message (S3 notifications); sometimes several (a backfill packs them).
    const n = rng.chance(0.2) ? rng.int(2, 3) : 1;
    const chunk = records.slice(i, i + n);
    i += n;
    injections.push({
      at: Math.max(...chunk.map((c) => c.at)),
      body: JSON.stringify({ Records: chunk.map((c) => c.record) }),
    });
  }
  if (rng.chance(0.2)) {
    // A record S3 would never send: quarantined with its reason, the message acknowledged.
    const bad = { ...s3Record({ key: 'logs/bad.json' }), eventVersion: '1.0' };
    injections.push({ at: rng.int(0, 120_000), body: JSON.stringify({ Records: [bad] }), malformed: true });
  }
  if (world.scenario === 'clean') injections.push(...rewrites(world));
  injections.sort((a, b) => a.at - b.at);
  // The queue numbers messages in send order.
  injections.forEach((m, i) => {
    if (m.malformed) expected.quarantined.add(`ingest-${i + 1}#0`);
  });
  return { injections, expected };
}

/**
 * The clean scenario's producers rewriting `orders/` keys after their first write, mostly with new rows,
 * sometimes with the very bytes of the first write (so an ETag names content, not a write), each with its
 * own S3 event (a duplicate under path identity: never a new file). Their own random stream, so a seed's
 * first writes and events are the plain scenario's.
 */
function rewrites(world: World): Injection[] {
  const rng = new Rng((world.seed * 104_729 + 7) >>> 0);
  const out: Injection[] = [];
  for (const [key, [first]] of world.landing.history) {
    if (!key.startsWith('orders/') || !first) continue;
    for (let n = 1, at = 0; n <= 2 && rng.chance(0.5); n++) {
      at += rng.int(1_000, 200_000);
      const content = rng.chance(0.3)
        ? first
        : landingBody(rng, `${key.slice('orders/f'.length, -'.json'.length)}w${n}`);
      const record = s3Record({ key, size: content.length, eTag: etagOf(content).slice(1, -1) });
      out.push({ at, body: JSON.stringify({ Records: [record] }), write: { key, content } });
    }
  }
  return out;
}

/**
 * Product code gets its clock and randomness from its deps (shared/kernel/clock.ts): each worker's ports
 * carry the scheduler's sleep and the seed's stream (world.ts), so nothing global is replaced while it runs.
 */
export function simulate(options: SimOptions): Promise<SimResult> {
  return run(new World(options.seed, options.plumbing, options.scenario), options);
}

async function run(world: World, options: SimOptions): Promise<SimResult> {
  const { scheduler } = world;
  const fleet = new Fleet(world);
  const { injections, expected } = plan(world);
  const ordered = injections;
  let injected = 0;
  const inject = async () => {
    for (const injection of ordered) {
      await scheduler.sleep(undefined, injection.at - scheduler.now);
      if (injection.write) {
        world.landing.put(injection.write.key, injection.write.content);
        scheduler.log(`producer rewrote landing/${injection.write.key}`);
      }
      world.ingest.send(injection.body);
      injected += 1;
    }
  };
  void inject();
  const workers = options.workers ?? DEFAULT_WORKERS;
  const roles: Role[] = [
    ...Array<Role>(workers.batchers).fill('batcher'),
    ...Array<Role>(workers.committers).fill('committer'),
    ...Array<Role>(workers.sweepers).fill('sweeper'),
    ...Array<Role>(workers.sinks).fill('sink'),
    ...(world.foreignWriter ? (['foreign'] as Role[]) : []),
    ...(world.scenario === 'optimize' ? (['optimize', 'optimize', 'vacuum'] as Role[]) : []),
  ];
  for (const role of roles) fleet.start(role);

  const settleMs = options.settleMs ?? 3_600_000;
  const violations: string[] = [];
  let checkedWrites = -1;
  let stopped = false;
  for (;;) {
    options.signal?.throwIfAborted();
    if (!(await scheduler.step())) break;
    world.nudgeIfDue();
    if (world.bucket.writes !== checkedWrites) {
      checkedWrites = world.bucket.writes;
      violations.push(...checkSafety(world), ...(await checkDelta(world)), ...checkCleanSafety(world));
      if (world.scenario === 'optimize')
        violations.push(...(await checkMaintenance(world)), ...checkSymlinkSafety(world));
      if (violations.length > 0) break;
    }
    if (!stopped && scheduler.now > FAULT_PHASE_MS) {
      stopped = true;
      world.stopFaults();
      scheduler.log('--- faults stop; time runs on until the pipeline is quiet ---');
    }
    if (!stopped || scheduler.steps % 50 !== 0) continue;
    const quiet =
      injected === ordered.length &&
      world.ingest.size === 0 &&
      world.commits.size === 0 &&
      world.sinkQueue.size === 0 &&
      world.nudgedSinceLastTrigger() &&
      fleet.busy === 0 &&
      wedged(world).length === 0;
    if (quiet) {
      violations.push(
        ...checkLiveness(world, expected),
        ...(await checkDeltaComplete(world)),
        ...(await checkCleanComplete(world)),
        ...checkSymlinkComplete(world),
      );
      break;
    }
    if (scheduler.now > FAULT_PHASE_MS + settleMs) {
      violations.push(
        `stuck: not quiet ${settleMs / 60_000} simulated minutes after the faults stopped ` +
          `(ingest ${world.ingest.size}, commit queue ${world.commits.size}, sink queue ${world.sinkQueue.size}, running ${fleet.busy})`,
        ...wedged(world),
        ...checkLiveness(world, expected).filter((v) => v.startsWith('I2')),
      );
      break;
    }
  }
  return {
    seed: options.seed,
    violations: [...new Set(violations)],
    trace: scheduler.trace,
    steps: scheduler.steps,
    simSeconds: Math.round(scheduler.now / 1000),
    digest: createHash('sha256')
      .update(`${scheduler.traceDigest()} ${scheduler.steps} ${scheduler.now}`)
      .digest('hex'),
    files: expected.files.size,
    world,
  };
}

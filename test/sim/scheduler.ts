import { createHash } from 'node:crypto';

/**
 * The simulated world's clock and its only source of randomness. Every port call of every worker parks
 * here (`sleep`) and is resumed by `step`, one at a time in simulated-time order, so one seed decides the
 * whole interleaving: no Math.random, no real timers.
 */

/** mulberry32: small, fast, good enough to explore schedules; a seed replays exactly. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j] as T, items[i] as T];
    }
    return items;
  }
}

/** A worker incarnation: a Lambda instance. Once crashed, none of its parked calls ever resumes. */
export class Worker {
  crashed = false;
  /** Lambda's deadline for the current invocation (simulated ms), if one is running. */
  deadline = Number.POSITIVE_INFINITY;
  constructor(
    readonly name: string,
    /** Added to the true time: this worker's wall clock is wrong by that much. */
    readonly skewMs: number,
    private readonly scheduler: Scheduler,
  ) {}
  now = (): number => this.scheduler.now + this.skewMs;
}

interface Parked {
  readonly at: number;
  readonly tie: number;
  /** Whose code resumes: a crashed worker's never does. */
  readonly worker: Worker | undefined;
  /** On whose behalf (a request in flight belongs to its worker but lands even if it crashed). */
  readonly owner: Worker | undefined;
  readonly resume: () => void;
}

/** A crashed worker's code awaits this: it never settles, like a killed process. */
export const never = new Promise<never>(() => {});

export class Scheduler {
  now = 0;
  steps = 0;
  private parked: Parked[] = [];
  /** Who did what, newest last; printed for a failing seed. */
  readonly trace: string[] = [];
  /** Every line ever logged (the trace keeps the last few thousand), so two runs can be compared whole. */
  private readonly traced = createHash('sha256');
  /** The fault model's crash decision, taken each time a worker would run on (see halted). */
  crashes: (worker: Worker) => boolean = () => false;

  constructor(readonly rng: Rng) {}

  log(line: string): void {
    const stamped = `${(this.now / 1000).toFixed(3).padStart(10)}s ${line}`;
    this.traced.update(`${stamped}\n`);
    this.trace.push(stamped);
    if (this.trace.length > 4000) this.trace.splice(0, 1000);
  }

  /** The SHA-256 of every line logged so far (hex). */
  traceDigest(): string {
    return this.traced.copy().digest('hex');
  }

  /** The worker whose code runs now (until its next park): product code that sleeps sleeps as it. */
  current: Worker | undefined;

  /** Parks the caller until `ms` of simulated time have passed (and the scheduler picks it). */
  sleep(worker: Worker | undefined, ms: number, owner: Worker | undefined = worker): Promise<void> {
    return new Promise((resume) => {
      // Ties broken at random: two calls due at once may complete in either order.
      this.parked.push({ at: this.now + Math.max(0, ms), tie: this.rng.next(), worker, owner, resume });
    });
  }

  /**
   * Whether the worker is dead before it runs on: crashed earlier, crashed now (any point between two
   * port calls), or killed by Lambda because the invocation ran past its timeout.
   */
  halted(worker: Worker): boolean {
    if (worker.crashed) return true;
    const timedOut = this.now > worker.deadline;
    if (timedOut || this.crashes(worker)) {
      worker.crashed = true;
      this.log(`${worker.name} ${timedOut ? 'TIMED OUT (Lambda killed it)' : 'CRASHED'}`);
      this.onCrash(worker);
    }
    return worker.crashed;
  }

  onCrash: (worker: Worker) => void = () => {};

  /** Resumes the earliest parked call and lets everything it unblocks run to its next park. */
  async step(): Promise<boolean> {
    if (this.parked.length === 0) return false;
    let best = 0;
    for (let i = 1; i < this.parked.length; i++) {
      const a = this.parked[i] as Parked;
      const b = this.parked[best] as Parked;
      if (a.at < b.at || (a.at === b.at && a.tie < b.tie)) best = i;
    }
    const next = this.parked[best] as Parked;
    this.parked.splice(best, 1);
    this.now = Math.max(this.now, next.at);
    this.steps += 1;
    if (next.worker && this.halted(next.worker)) return true;
    this.current = next.owner;
    next.resume();
    // Microtasks (the use case's code up to its next port call) all run before an immediate.
    await new Promise<void>((r) => setImmediate(r));
    return true;
  }
}

/**
 * The simulation's in-memory ports as a contract target: faults off, one worker, and each call driven
 * through the simulated scheduler until it settles (the fakes park every call on simulated time).
 */
import type { SymlinkManifests } from '../../shared/bronze/ports.ts';
import type { Scheduler } from '../sim/scheduler.ts';
import { Worker } from '../sim/scheduler.ts';
import { World } from '../sim/world.ts';
import type { BronzeTarget } from './bronze-contract.ts';
import type { ContractTarget } from './target.ts';

async function drive<T>(scheduler: Scheduler, call: () => Promise<T>): Promise<T> {
  let settled = false;
  const result = call();
  result.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    if (!(await scheduler.step())) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!settled) throw new Error('a fake port call parked with nothing left to resume it');
    }
  }
  return result;
}

/** An answer that is itself a port: a log file stream, a ranged reader. */
const hasMethods = (value: unknown): value is object =>
  typeof value === 'object' &&
  value !== null &&
  Object.values(value).some((field) => typeof field === 'function');

/**
 * The port with every method run to completion on the scheduler; an answer that is an object of methods
 * (a log file stream, a ranged reader) is driven the same way.
 */
function driven<T extends object>(port: T, scheduler: Scheduler): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        const wrap = (answer: unknown) => (hasMethods(answer) ? driven(answer, scheduler) : answer);
        return result instanceof Promise ? drive(scheduler, () => result).then(wrap) : wrap(result);
      };
    },
  });
}

export async function fakeTarget(seed: number): Promise<ContractTarget> {
  const world = new World(seed);
  world.stopFaults();
  const worker = new Worker('contract', 0, world.scheduler);
  const ports = world.ports(worker);
  return {
    ledger: driven(ports.ledger, world.scheduler),
    store: driven(ports.store, world.scheduler),
    commitQueue: driven(ports.commitQueue, world.scheduler),
    async receiveCommits() {
      const received = world.commits.receive(10);
      for (const r of received) world.commits.delete(r);
      return received.map((r) => ({ body: r.message.body, group: r.message.group }));
    },
  };
}

/** The simulation's bronze fakes: each `delta()` a new table root in the world's bucket. */
export async function fakeBronzeTarget(seed: number): Promise<BronzeTarget> {
  const world = new World(seed);
  world.stopFaults();
  const worker = new Worker('contract', 0, world.scheduler);
  const ports = world.sinkPorts(worker);
  let roots = 0;
  return {
    delta: () => driven(world.foreignDelta(worker, `t${++roots}/_bronze`), world.scheduler),
    cursors: driven(ports.cursors, world.scheduler),
  };
}

/** The simulation's symlink manifests of a fresh table root, every call driven to completion. */
export async function fakeSymlinkManifests(seed: number): Promise<SymlinkManifests> {
  const world = new World(seed, {}, 'optimize');
  world.stopFaults();
  const worker = new Worker('contract', 0, world.scheduler);
  return driven(world.symlinkManifests(worker, 't/_bronze'), world.scheduler);
}

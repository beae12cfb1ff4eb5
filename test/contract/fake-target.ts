/**
 * The simulation's in-memory ports as a contract target: faults off, one worker, and each call driven
 * through the simulated scheduler until it settles (the fakes park every call on simulated time).
 */
import type { Scheduler } from '../sim/scheduler.ts';
import { Worker } from '../sim/scheduler.ts';
import { World } from '../sim/world.ts';
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

/** The port with every method run to completion on the scheduler. */
function driven<T extends object>(port: T, scheduler: Scheduler): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => drive(scheduler, () => value.apply(target, args));
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

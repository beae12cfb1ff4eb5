import type { AwsClients } from '../../local/aws/clients.ts';
import type { VariantName } from '../sim/variants.ts';
import { VARIANTS } from '../sim/variants.ts';
import { PipelineHarness } from '../support/harness.ts';
import { MemoryHarness } from '../support/memory-harness.ts';
import type { MatrixTarget } from './matrix.ts';

/**
 * The matrix on the simulation's fakes, optionally with a broken variant of the protocol plugged in
 * (test/sim/variants.ts) to show that the matrix catches it. One seed for every scenario: the discovery
 * run and each scenario then make the same calls in the same order up to the crash.
 */
export function memoryTarget(variant?: VariantName, seed = 1): MatrixTarget {
  const plumbing = variant ? VARIANTS[variant].plumbing : undefined;
  return async (config) => MemoryHarness.create({ config, seed, plumbing });
}

/**
 * The matrix on the emulator: the real adapters, each scenario with its own tables, bucket and queues.
 * Invocations take what one receive returns, as the fakes' do: every message of an invocation under test
 * (phase 2 has 7) is on the queue before it starts. A batching window (the harness's default is 5 s for a
 * batch over 10) would make each of them wait it out for messages that never come, re-receiving its own
 * after their 1 s visibility timeout: each message 5 times in one batch, which the fakes never do.
 */
export function motoTarget(clients: AwsClients): MatrixTarget {
  return (config) => PipelineHarness.create(clients, { config, countRequests: false, batchingWindowMs: 0 });
}

import { inject } from 'vitest';
import { type AwsClients, createClients } from '../../local/aws/clients.ts';
import type { AwsTarget } from '../../shared/kernel/aws/target.ts';

export function testTarget(): AwsTarget {
  return inject('awsTarget');
}

/** Clients for the run's target; one set per test file is plenty. */
export function testClients(): AwsClients {
  return createClients(testTarget());
}

export { uniqueName } from './names.ts';

import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { type AwsClients, createClients } from '../../shared/aws/clients.ts';
import type { AwsTarget } from '../../shared/aws/target.ts';

export function testTarget(): AwsTarget {
  return inject('awsTarget');
}

/** Clients for the run's target; one set per test file is plenty. */
export function testClients(): AwsClients {
  return createClients(testTarget());
}

/** A name no other test (or concurrent test run on the same emulator) uses; lowercase for S3. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

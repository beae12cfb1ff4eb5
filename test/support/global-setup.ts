import type { TestProject } from 'vitest/node';
import { startEmulator } from '../../local/emulator.ts';
import { type AwsTarget, emulatorTarget, targetFromEnv } from '../../shared/aws/target.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsTarget: AwsTarget;
  }
}

/**
 * Starts a private moto server for this test run unless the environment names a target
 * (INLET_AWS_ENDPOINT for LocalStack or an emulator already up, INLET_AWS_TARGET=aws for a real account).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = targetFromEnv();
  if (fromEnv) {
    project.provide('awsTarget', fromEnv);
    return async () => {};
  }
  const emulator = await startEmulator();
  project.provide('awsTarget', emulatorTarget(emulator.endpoint));
  return () => emulator.stop();
}

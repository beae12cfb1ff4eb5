import type { TestProject } from 'vitest/node';
import { startEmulator } from '../../local/emulator.ts';
import { type IamProxy, startIamProxy } from '../../local/iam/proxy.ts';
import { writeIamReport } from '../../local/iam/report.ts';
import { type AwsTarget, emulatorTarget, targetFromEnv } from '../../shared/kernel/aws/target.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsTarget: AwsTarget;
    iamProxy: string;
  }
}

/**
 * Starts a private moto server for this test run unless the environment names a target
 * (INLET_AWS_ENDPOINT for LocalStack or an emulator already up, INLET_AWS_TARGET=aws for a real account),
 * and the IAM check proxy in front of an emulator: functions call through it as their roles
 * (test/support/iam.ts). Its report (calls made vs grants, per function) goes to INLET_IAM_REPORT, every
 * decision as JSON lines to INLET_IAM_DECISIONS.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = targetFromEnv();
  const emulator = fromEnv ? undefined : await startEmulator();
  const target = fromEnv ?? emulatorTarget(emulator?.endpoint ?? '');
  project.provide('awsTarget', target);
  let proxy: IamProxy | undefined;
  const decisionsFile = process.env.INLET_IAM_DECISIONS;
  if (target.kind === 'emulator')
    proxy = await startIamProxy({ upstream: target.endpoint, ...(decisionsFile ? { decisionsFile } : {}) });
  project.provide('iamProxy', proxy?.endpoint ?? '');
  return async () => {
    if (proxy) {
      if (process.env.INLET_IAM_REPORT) await writeIamReport(proxy.check, process.env.INLET_IAM_REPORT);
      await proxy.stop();
    }
    await emulator?.stop();
  };
}

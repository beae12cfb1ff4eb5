import type { AwsClients } from '../../local/aws/clients.ts';
import type { Credentials, IamAccess } from '../../local/iam/client.ts';
import { type FunctionIdentity, functionAccess } from '../../local/lambda/access.ts';
import { ensureLambdaRuntime } from '../../local/lambda/install.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { LocalRunner } from '../../local/runner.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { deployedRoles } from './iam.ts';

export interface TestRunner {
  readonly runner: LocalRunner;
  /** Between the `faulty` functions' processes and AWS: what a test makes AWS answer them. */
  readonly faults: FaultProxy;
  /** The stack's roles as the run's IAM check registered them (undefined on real AWS). */
  readonly iam: IamAccess | undefined;
  stop(): Promise<void>;
}

/**
 * The local runner on a stack deployed to the emulator, started, as the suite runs it: each function's bundle
 * calling AWS as its role through the run's IAM check, those `faulty` names through a fault proxy first, and
 * with other credentials than its role's where `credentials` gives some (a role with a grant cut).
 */
export async function startTestRunner(
  stack: LocalStack,
  options: {
    readonly clients: AwsClients;
    readonly endpoint: string;
    readonly region: string;
    readonly faulty?: (fn: FunctionIdentity) => boolean;
    readonly credentials?: (fn: FunctionIdentity) => Credentials | undefined;
  },
): Promise<TestRunner> {
  const iam = await deployedRoles(stack.stackName, stack.iam);
  const faults = await startFaultProxy(iam?.endpoint ?? options.endpoint);
  const asRole = functionAccess(options.endpoint, iam);
  const runner = new LocalRunner({
    clients: options.clients,
    stack,
    runtime: await ensureLambdaRuntime(),
    endpoint: options.endpoint,
    region: options.region,
    // Most tests wait for a few files, done well within a second.
    quietCheckMs: 100,
    ...(iam ? { iam } : {}),
    access: (fn) => {
      const access = options.faulty?.(fn) ? { ...asRole(fn), endpoint: faults.endpoint } : asRole(fn);
      const credentials = options.credentials?.(fn);
      return credentials ? { ...access, credentials } : access;
    },
  });
  runner.start();
  return {
    runner,
    faults,
    iam,
    async stop() {
      await runner.stop();
      await faults.stop();
    },
  };
}

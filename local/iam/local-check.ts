/**
 * Local mode's IAM check: the proxy in this process, in front of the emulator, with the deployed stack's
 * roles registered. Functions the local runner (or the Lambda runtime) starts call AWS through it with
 * their role's credentials; every decision goes to `.inlet/iam-decisions.jsonl`.
 */
import { rmSync } from 'node:fs';
import type { IamAccess } from './client.ts';
import type { BoundStack } from './policies.ts';
import { type IamProxy, startIamProxy } from './proxy.ts';

export interface LocalIamCheck {
  readonly proxy: IamProxy;
  /** What the runner needs: the proxy's endpoint and each function's credentials. */
  readonly iam: IamAccess;
}

export async function startLocalIamCheck(options: {
  readonly upstream: string;
  readonly stackName: string;
  readonly stack: BoundStack;
  readonly decisionsFile: string;
}): Promise<LocalIamCheck> {
  rmSync(options.decisionsFile, { force: true });
  const proxy = await startIamProxy({ upstream: options.upstream, decisionsFile: options.decisionsFile });
  const credentials = proxy.check.register({ label: options.stackName, stack: options.stack });
  return { proxy, iam: { endpoint: proxy.endpoint, credentials } };
}

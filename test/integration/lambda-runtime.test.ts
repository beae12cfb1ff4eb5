// What only shows when a function runs as Lambda runs it: its bundle, started from its deployed Handler, with
// its deployed Environment and nothing else, stopped at its Timeout. Each case changes the deployed function
// as an operator (or a wrong template) would, through the Lambda API, and checks local mode does what Lambda
// would: the invocation fails, the batch is not acknowledged, nothing is committed until the function is fixed.
import {
  type FunctionConfiguration,
  GetFunctionConfigurationCommand,
  UpdateFunctionConfigurationCommand,
} from '@aws-sdk/client-lambda';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionAccess } from '../../local/lambda/access.ts';
import { bringUpLocalStack, type LocalStack } from '../../local/local-stack.ts';
import { LocalRunner } from '../../local/runner.ts';
import { localTimings } from '../../local/timings.ts';
import { OUTPUTS } from '../../shared/names.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { deployedRoles } from '../support/iam.ts';

const target = testTarget();
const clients = testClients();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const region = 'us-east-1';

describe.skipIf(target.kind !== 'emulator')('functions run as Lambda runs them', () => {
  let stack: LocalStack;
  let runner: LocalRunner;
  let batcher: { logicalId: string; functionName: string };
  /** Between the batcher's process and AWS: a slow AWS, for the batcher only. */
  let proxy: FaultProxy;

  beforeAll(async () => {
    stack = await bringUpLocalStack(clients, {
      'inlet:stackName': uniqueName('InletRuntime'),
      'inlet:tables': [{ name: 'orders', prefix: 'orders/' }],
      // A failed batch comes back after 24 s (6x the 4 s timeout), not 30. Not shorter: the Runtime Interface
      // Emulator counts a cold start's init into the first invocation's timeout (docs/emulator.md).
      ...localTimings(4),
    });
    const found = stack.functions.find((f) => f.logicalId.startsWith('InletFunctionsBatcher'));
    if (!found) throw new Error('no batcher in the stack');
    batcher = found;
    // Each function calls AWS as its role through the IAM check; the batcher through the slow proxy first.
    const iam = await deployedRoles(stack.stackName, stack.iam);
    proxy = await startFaultProxy(iam?.endpoint ?? endpoint);
    const asRole = functionAccess(endpoint, iam);
    runner = new LocalRunner({
      clients,
      stack,
      endpoint,
      region,
      quietCheckMs: 100,
      ...(iam ? { iam } : {}),
      access: (fn) =>
        fn.logicalId === batcher.logicalId ? { ...asRole(fn), endpoint: proxy.endpoint } : asRole(fn),
    });
    runner.start();
  }, 180_000);

  afterAll(async () => {
    await runner?.stop();
    await proxy?.stop();
  });

  const configuration = () =>
    clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: batcher.functionName }));
  const update = (change: Partial<FunctionConfiguration>) =>
    clients.lambda.send(
      new UpdateFunctionConfigurationCommand({ FunctionName: batcher.functionName, ...(change as object) }),
    );

  async function committedKeys(): Promise<string[]> {
    const keys: string[] = [];
    for (const version of await runner.store.listManifestVersions('orders'))
      keys.push(...((await runner.store.getManifest('orders', version))?.files ?? []).map((f) => f.key));
    return keys;
  }

  /** Uploads a file while the batcher is broken by `change`, then repairs it: the file must wait for that. */
  async function brokenThenFixed(
    key: string,
    change: Partial<FunctionConfiguration>,
    errorType: RegExp,
    repair = () => {},
  ) {
    const before = await configuration();
    const failuresBefore = runner.failures.length;
    await update(change);
    try {
      await clients.s3.send(
        new PutObjectCommand({ Bucket: stack.outputs[OUTPUTS.landingBucket], Key: key, Body: '{}' }),
      );
      const deadline = Date.now() + 60_000;
      while (!runner.failures.slice(failuresBefore).some((f) => errorType.test(f.error.errorType))) {
        if (Date.now() > deadline)
          throw new Error(
            `no ${errorType} failure of the batcher in 60 s; failures: ${JSON.stringify(runner.failures.slice(failuresBefore))}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The batch was not acknowledged: the file is not committed while the function stays broken.
      expect(await committedKeys()).not.toContain(key);
    } finally {
      repair();
      await update({ Handler: before.Handler, Timeout: before.Timeout, Environment: before.Environment });
    }
    // Its message comes back after the visibility timeout and the repaired function commits it, once.
    await runner.untilQuiet(undefined, 120_000);
    expect((await committedKeys()).filter((k) => k === key)).toEqual([key]);
    return runner.failures.slice(failuresBefore);
  }

  it('a Handler naming no export of the bundle fails every invocation, as Lambda fails it', async () => {
    const failures = await brokenThenFixed(
      'orders/handler.json',
      { Handler: 'index.handlr' },
      /^Runtime\.HandlerNotFound$/,
    );
    expect(failures.map((f) => f.error.errorMessage).join('\n')).toMatch(
      /index\.handlr is undefined or not exported/,
    );
  }, 240_000);

  it('a variable the function reads and its Environment lacks fails its start, as on Lambda', async () => {
    const { Environment } = await configuration();
    const { INLET_COMMIT_QUEUE_URL: _, ...without } = Environment?.Variables ?? {};
    const failures = await brokenThenFixed(
      'orders/environment.json',
      { Environment: { Variables: without } },
      /./,
    );
    expect(failures.map((f) => f.error.errorMessage).join('\n')).toMatch(/INLET_COMMIT_QUEUE_URL/);
  }, 240_000);

  it('an invocation past the Timeout is killed, and its batch comes back after the visibility timeout', async () => {
    // Every AWS call of the batcher takes 1.5 s: a 1 s timeout stops each invocation before it seals.
    proxy.delayMs = 1_500;
    await brokenThenFixed('orders/timeout.json', { Timeout: 1 }, /^Sandbox\.Timedout$/, () => {
      proxy.delayMs = 0;
    });
  }, 240_000);
});

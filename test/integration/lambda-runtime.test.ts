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
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../local/iam/client.ts';
import { bringUpLocalStack, type LocalStack } from '../../local/local-stack.ts';
import type { LocalRunner } from '../../local/runner.ts';
import { localTimings } from '../../local/timings.ts';
import { ENV, OUTPUTS } from '../../shared/kernel/names.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { iamCheck } from '../support/iam.ts';
import { waitForLambdaRuntime } from '../support/lambda-runtime.ts';
import { startTestRunner, type TestRunner } from '../support/local-runner.ts';

const target = testTarget();
// The runtime the bundles run under: `npm test` may still be building it (test/support/lambda-runtime.ts).
await waitForLambdaRuntime();
const clients = testClients();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const region = 'us-east-1';

describe.skipIf(target.kind !== 'emulator')('functions run as Lambda runs them', () => {
  let stack: LocalStack;
  let runner: LocalRunner;
  let batcher: { logicalId: string; functionName: string };
  /** Between the batcher's process and AWS: a slow AWS, for the batcher only. */
  let proxy: FaultProxy;
  let local: TestRunner;
  let iam: TestRunner['iam'];
  /** Credentials the next batcher execution environment gets instead of its role's (a role with a grant cut). */
  let batcherCredentials: Credentials | undefined;

  beforeAll(async () => {
    stack = await bringUpLocalStack(clients, {
      'inlet:stackName': uniqueName('InletRuntime'),
      'inlet:tables': [{ name: 'orders', prefix: 'orders/' }],
      // A 4 s timeout, not shorter: the Runtime Interface Emulator counts a cold start's init into the first
      // invocation's timeout (docs/emulator.md). Claims are leased for 8 s.
      ...localTimings(4),
    });
    // What each case waits for is its failed batch coming back: after 10 s rather than the stack's 24 s (6x
    // the timeout, for a batcher's own retries). Lambda needs a queue's visibility timeout to be at least the
    // function's; 10 s is also past the claims' lease, so a claim a killed invocation made is taken over.
    await clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: stack.outputs[OUTPUTS.ingestQueueUrl],
        Attributes: { VisibilityTimeout: '10' },
      }),
    );
    const found = stack.functions.find((f) => f.logicalId.startsWith('InletFunctionsBatcher'));
    if (!found) throw new Error('no batcher in the stack');
    batcher = found;
    // Each function calls AWS as its role through the IAM check; the batcher through the slow proxy first.
    const isBatcher = (fn: { logicalId: string }) => fn.logicalId === batcher.logicalId;
    local = await startTestRunner(stack, {
      clients,
      endpoint,
      region,
      faulty: isBatcher,
      credentials: (fn) => (isBatcher(fn) ? batcherCredentials : undefined),
    });
    ({ runner, iam } = local);
    proxy = local.faults;
  }, 180_000);

  afterAll(async () => {
    await local?.stop();
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
    const { [ENV.commitQueueUrl]: _, ...without } = Environment?.Variables ?? {};
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

  it.skipIf(!iamCheck())(
    "a call its role does not allow reaches the IAM check from the bundle's process and is refused, as AWS would",
    async () => {
      // The batcher's role without dynamodb:PutItem (its claim), registered as a fixture whose denials are
      // expected; an execution environment started with the new configuration gets its credentials.
      const cut = structuredClone(stack.iam);
      const role = cut.roles.Batcher;
      if (!role || !iam) throw new Error('no Batcher role in the IAM check');
      role.policy.Statement = role.policy.Statement.flatMap((statement) => {
        const actions = [statement.Action ?? []].flat().filter((a) => a !== 'dynamodb:PutItem');
        return actions.length > 0 ? [{ ...statement, Action: actions }] : [];
      });
      const check = iamCheck();
      const restricted = await check?.register(`${stack.stackName}-cut`, cut, { expectDenials: true });
      batcherCredentials = restricted?.Batcher;
      const before = (await check?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0;
      const { Environment } = await configuration();
      await update({ Environment: { Variables: { ...Environment?.Variables, INLET_TEST_CASE: 'cut' } } });
      try {
        const key = 'orders/denied.json';
        await clients.s3.send(
          new PutObjectCommand({ Bucket: stack.outputs[OUTPUTS.landingBucket], Key: key, Body: '{}' }),
        );
        const deadline = Date.now() + 60_000;
        let denied: Awaited<ReturnType<NonNullable<typeof check>['denials']>>['denials'] = [];
        while (denied.length === 0) {
          if (Date.now() > deadline) throw new Error('no denial of the batcher in 60 s');
          await new Promise((resolve) => setTimeout(resolve, 200));
          denied = ((await check?.denials(before, { expected: true }))?.denials ?? []).filter(
            (d) => d.stack === `${stack.stackName}-cut`,
          );
        }
        // Made by the function's own process (the mapping's poller never writes to the ledger), as its role.
        expect(denied[0]).toMatchObject({
          caller: 'Batcher',
          action: 'dynamodb:PutItem',
          resource: expect.stringContaining(`:table/${stack.outputs[OUTPUTS.ledgerTable]}`),
          allowed: false,
        });
      } finally {
        batcherCredentials = undefined;
        await update({ Environment });
      }
    },
    120_000,
  );
});

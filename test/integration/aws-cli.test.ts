import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClients, destroyClients } from '../../local/aws/clients.ts';
import { projectRoot } from '../../local/paths.ts';
import { stackResources } from '../../local/stack-resources.ts';
import type { LocalConfig } from '../../local/state.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { tableKey } from '../../shared/ingestion/ledger-keys.ts';
import { BATCH_COMMITTED } from '../../shared/kernel/names.ts';
import { testTarget, uniqueName } from '../support/aws.ts';
import { awsCli, awsCliBatch, json } from '../support/aws-cli.ts';
import { waitForLambdaRuntime } from '../support/lambda-runtime.ts';
import { waitForExecution } from '../support/step-functions.ts';

// What docs/emulator.md ("APIs on the local stack") says of each API an operator calls on the deployed
// stack, checked with the AWS CLI against `npm start`, as a user would: served as AWS serves it, or the
// named difference. Commands are batched into one CLI process where they need no answer in between (the
// CLI's start-up is about a second of CPU).

const target = testTarget();
// The runtime the bundles run under: `npm test` may still be building it (test/support/lambda-runtime.ts).
await waitForLambdaRuntime();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const stateDir = mkdtempSync(join(tmpdir(), 'inlet-aws-cli-'));
const stackName = uniqueName('InletAwsCli');
let localMode: ChildProcess | undefined;
let local: LocalConfig;
let stderr = '';
let backfillFunction = '';

/** `npm start` with the demo files, left running: local mode as a user has it in another terminal. */
function startLocalMode(): Promise<void> {
  const child = spawn(
    join(projectRoot, 'node_modules', '.bin', 'tsx'),
    [
      join(projectRoot, 'cli', 'start.ts'),
      '--endpoint',
      endpoint,
      '--stack-name',
      stackName,
      '--no-view',
      '--demo',
      '--files-per-table',
      '2',
    ],
    { cwd: projectRoot, env: { ...process.env, INLET_STATE_DIR: stateDir, NODE_NO_WARNINGS: '1' } },
  );
  localMode = child;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${stderr}`)), 300_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.includes('[inlet] running;')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited ${code}:\n${stderr}`)));
  });
}

const executionArnOf = (name: string) =>
  `${(local.backfillStateMachineArn ?? '').replace(':stateMachine:', ':execution:')}:${name}`;

describe.skipIf(target.kind !== 'emulator')('the AWS CLI against local mode', () => {
  beforeAll(async () => {
    await startLocalMode();
    local = JSON.parse(readFileSync(join(stateDir, 'local.json'), 'utf8')) as LocalConfig;
    const clients = createClients(target);
    const resources = await stackResources(clients, local.stackName);
    destroyClients(clients);
    backfillFunction =
      resources.find(
        (r) => r.type === 'AWS::Lambda::Function' && r.logicalId.startsWith('InletFunctionsBackfill'),
      )?.physicalId ?? '';
  }, 320_000);

  afterAll(async () => {
    if (localMode && localMode.exitCode === null) {
      const exited = new Promise((resolve) => localMode?.once('exit', resolve));
      localMode.kill('SIGTERM');
      await exited;
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a backfill started with `aws stepfunctions start-execution` runs, and describe-execution reports SUCCEEDED with its output', async () => {
    const name = uniqueName('cli-dry');
    const input = '{"table":"orders","dryRun":true}';
    const started = json<{ executionArn: string; startDate: number }>(
      await awsCli(endpoint, [
        'stepfunctions',
        'start-execution',
        '--state-machine-arn',
        local.backfillStateMachineArn ?? '',
        '--name',
        name,
        '--input',
        input,
      ]),
    );
    expect(started.executionArn).toBe(executionArnOf(name));
    // Waited for with the SDK (a CLI process per poll costs a second of CPU), then reported by the CLI.
    const clients = createClients(target);
    await waitForExecution(clients.sfn, started.executionArn);
    destroyClients(clients);
    const described = json(
      await awsCli(endpoint, [
        'stepfunctions',
        'describe-execution',
        '--execution-arn',
        started.executionArn,
      ]),
    );
    expect(described).toMatchObject({
      executionArn: started.executionArn,
      stateMachineArn: local.backfillStateMachineArn,
      name,
      status: 'SUCCEEDED',
      input,
      inputDetails: { included: true },
      outputDetails: { included: true },
      redriveCount: 0,
      redriveStatus: 'NOT_REDRIVABLE',
      redriveStatusReason: 'Execution is SUCCEEDED and cannot be redriven',
      startDate: started.startDate,
    });
    expect(described.stopDate).toBeGreaterThanOrEqual(started.startDate);
    // The demo put orders/ files (and some the table does not take): a dry run lists, matches, enqueues nothing.
    const output = JSON.parse(String(described.output));
    expect(output).toMatchObject({
      table: 'orders',
      dryRun: true,
      enqueued: 0,
      complete: true,
      executions: 1,
    });
    expect(output.listed).toBeGreaterThan(0);
    expect(output.wouldEnqueue + output.alreadyIngested).toBe(output.matched);
  }, 180_000);

  it('Step Functions: list-executions, get-execution-history (paged, reversed, without data), the state machine, stop-execution and names', async () => {
    const done = json<{ executions: Array<Record<string, unknown>> }>(
      (
        await awsCliBatch(endpoint, [
          ['stepfunctions', 'list-executions', '--state-machine-arn', local.backfillStateMachineArn ?? ''],
        ])
      )[0],
    ).executions.find((e) => e.status === 'SUCCEEDED');
    expect(done).toMatchObject({ stateMachineArn: local.backfillStateMachineArn, redriveCount: 0 });
    expect(done?.stopDate).toEqual(expect.any(Number));
    const arn = String(done?.executionArn);
    const results = await awsCliBatch(endpoint, [
      ['stepfunctions', 'get-execution-history', '--execution-arn', arn],
      [
        'stepfunctions',
        'get-execution-history',
        '--execution-arn',
        arn,
        '--reverse-order',
        '--max-items',
        '1',
      ],
      ['stepfunctions', 'get-execution-history', '--execution-arn', arn, '--no-include-execution-data'],
      ['stepfunctions', 'describe-execution', '--execution-arn', arn],
      ['stepfunctions', 'describe-state-machine', '--state-machine-arn', local.backfillStateMachineArn ?? ''],
      ['stepfunctions', 'describe-state-machine-for-execution', '--execution-arn', arn],
      // Stopping a closed execution changes nothing (stopping a running one: sfn-executor.test.ts).
      ['stepfunctions', 'stop-execution', '--execution-arn', arn, '--error', 'Operator', '--cause', 'late'],
      ['stepfunctions', 'describe-execution', '--execution-arn', arn],
      // A closed execution's name cannot be used again (StartExecution: ExecutionAlreadyExists).
      [
        'stepfunctions',
        'start-execution',
        '--state-machine-arn',
        local.backfillStateMachineArn ?? '',
        '--name',
        String(done?.name),
        '--input',
        '{"table":"orders"}',
      ],
      ['stepfunctions', 'describe-execution', '--execution-arn', executionArnOf('no-such-execution')],
      // Not served locally (docs/emulator.md).
      ['stepfunctions', 'redrive-execution', '--execution-arn', arn],
    ]);
    const [
      history,
      newest,
      withoutData,
      described,
      machine,
      forExecution,
      stop,
      after,
      again,
      missing,
      redrive,
    ] = results;

    const events = json<{ events: Array<Record<string, unknown>> }>(history).events;
    expect(events[0]).toMatchObject({
      id: 1,
      previousEventId: 0,
      type: 'ExecutionStarted',
      executionStartedEventDetails: { input: json(described).input, inputDetails: { truncated: false } },
    });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(1, 4).map((e) => e.type)).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
    ]);
    expect(events[2]).toMatchObject({
      taskScheduledEventDetails: { resourceType: 'lambda', resource: 'invoke' },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'ExecutionSucceeded',
      executionSucceededEventDetails: { output: json(described).output },
    });
    const page = json<{ events: Array<Record<string, unknown>>; NextToken?: string }>(newest);
    expect(page.events).toEqual([events.at(-1)]);
    expect(page.NextToken).toEqual(expect.any(String));
    const bare = json<{ events: Array<Record<string, Record<string, unknown>>> }>(withoutData).events;
    expect(bare[0]?.executionStartedEventDetails).not.toHaveProperty('input');
    expect(JSON.parse(String(json(machine).definition)).States).toHaveProperty('Plan');
    expect(json(forExecution).stateMachineArn).toBe(local.backfillStateMachineArn);
    expect(json(stop).stopDate).toEqual(json(described).stopDate);
    expect(json(after)).toEqual(json(described));
    expect(again?.status).not.toBe(0);
    expect(again?.stderr).toMatch(/ExecutionAlreadyExists/);
    expect(missing?.stderr).toMatch(/ExecutionDoesNotExist/);
    expect(redrive?.status).not.toBe(0);
  }, 120_000);

  it('the pipeline APIs: S3 in and out, the ledger, queues, the stack, and what local mode does not serve', async () => {
    const file = join(stateDir, 'from-aws-cli.json');
    writeFileSync(file, '{"from":"the AWS CLI"}\n');
    const key = 'orders/from-aws-cli.json';
    // A consumer of the committed versions subscribes as on AWS: a rule on the bus the committer publishes
    // to ('default'), matching BatchCommitted, into a queue of its own.
    const rule = uniqueName('committed');
    const [queue] = await awsCliBatch(endpoint, [['sqs', 'create-queue', '--queue-name', rule]]);
    const queueUrl = json<{ QueueUrl: string }>(queue).QueueUrl;
    const queueArn = `arn:aws:sqs:us-east-1:123456789012:${rule}`;
    const subscribed = await awsCliBatch(endpoint, [
      [
        'events',
        'put-rule',
        '--name',
        rule,
        '--event-pattern',
        JSON.stringify({ 'detail-type': [BATCH_COMMITTED] }),
      ],
      [
        'events',
        'put-targets',
        '--rule',
        rule,
        '--targets',
        JSON.stringify([{ Id: 'consumer', Arn: queueArn }]),
      ],
      ['s3', 'cp', file, `s3://${local.landingBucket}/${key}`],
    ]);
    for (const result of subscribed) expect(result.status, result.stderr).toBe(0);
    // Ingested by the running pipeline (S3 event -> queue -> batcher -> committer): in a manifest shortly.
    const clients = createClients(target);
    const store = new S3BatchStore({ client: clients.s3, bucket: local.manifestBucket });
    let version = 0;
    for (const deadline = Date.now() + 90_000; !version && Date.now() < deadline; ) {
      for (const v of await store.listManifestVersions('orders'))
        if ((await store.getManifest('orders', v))?.files.some((f) => f.key === key)) version = v;
      if (!version) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(version).toBeGreaterThan(0);
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: local.ingestDlqUrl, AttributeNames: ['QueueArn'] }),
    );
    destroyClients(clients);
    const manifestKey = `orders/_manifests/${String(version).padStart(20, '0')}.json`;
    const manifestFile = join(stateDir, 'manifest.json');
    const results = await awsCliBatch(endpoint, [
      ['s3api', 'list-objects-v2', '--bucket', local.landingBucket, '--prefix', 'orders/'],
      ['s3api', 'get-object', '--bucket', local.manifestBucket, '--key', manifestKey, manifestFile],
      [
        'dynamodb',
        'get-item',
        '--table-name',
        local.ledgerTable,
        '--key',
        JSON.stringify(ddbKey(tableKey('orders'))),
      ],
      [
        'sqs',
        'get-queue-attributes',
        '--queue-url',
        local.ingestDlqUrl,
        '--attribute-names',
        'ApproximateNumberOfMessages',
      ],
      ['cloudformation', 'describe-stacks', '--stack-name', local.stackName],
      ['lambda', 'get-function-configuration', '--function-name', backfillFunction],
      // Not served locally (docs/emulator.md): the stack's alarms and metrics, its schedules, the DLQ redrive task.
      ['cloudwatch', 'describe-alarms', '--alarm-name-prefix', local.stackName],
      ['cloudwatch', 'list-metrics', '--namespace', 'Inlet'],
      ['scheduler', 'list-schedules'],
      ['sqs', 'start-message-move-task', '--source-arn', Attributes?.QueueArn ?? ''],
      [
        'lambda',
        'invoke',
        '--function-name',
        backfillFunction,
        '--payload',
        '{}',
        join(stateDir, 'invoked.json'),
      ],
      // Long-polled: the event follows the manifest by a moment (published once the commit is final).
      [
        'sqs',
        'receive-message',
        '--queue-url',
        queueUrl,
        '--max-number-of-messages',
        '10',
        '--wait-time-seconds',
        '10',
      ],
    ]);
    const [listed, got, item, dlq, stacks, config, alarms, metrics, schedules, moveTask, invoked, received] =
      results;
    expect(json<{ Contents: Array<{ Key: string }> }>(listed).Contents.map((o) => o.Key)).toContain(key);
    expect(got?.status, got?.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    expect(manifest).toMatchObject({ table: 'orders', version });
    const head = json<{ Item: { head: { N: string } } }>(item).Item.head;
    expect(Number(head.N)).toBeGreaterThanOrEqual(version);
    expect(json<{ Attributes: Record<string, string> }>(dlq).Attributes.ApproximateNumberOfMessages).toBe(
      '0',
    );
    const outputs = json<{ Stacks: Array<{ Outputs: Array<{ OutputKey: string; OutputValue: string }> }> }>(
      stacks,
    ).Stacks[0]?.Outputs;
    expect(outputs?.find((o) => o.OutputKey === 'BackfillStateMachineArn')?.OutputValue).toBe(
      local.backfillStateMachineArn,
    );
    expect(
      json<{ Environment: { Variables: Record<string, string> } }>(config).Environment.Variables,
    ).toHaveProperty('INLET_INGEST_QUEUE_URL');
    expect(json<{ MetricAlarms: unknown[] }>(alarms).MetricAlarms).toEqual([]);
    expect(json<{ Metrics: unknown[] }>(metrics).Metrics).toEqual([]);
    expect(json<{ Schedules: unknown[] }>(schedules).Schedules).toEqual([]);
    expect(moveTask?.status).not.toBe(0);
    // Invoke does not run the function's code (moto would need Docker): on AWS, `{}` reaches the backfill
    // handler, which refuses it ("unknown backfill action").
    expect(json(invoked)).toMatchObject({ StatusCode: 200, FunctionError: expect.any(String) });
    expect(readFileSync(join(stateDir, 'invoked.json'), 'utf8')).not.toMatch(/unknown backfill action/);
    // The committer's BatchCommitted event reached the consumer's rule and queue.
    const events = json<{ Messages?: Array<{ Body: string }> }>(received).Messages ?? [];
    expect(events.map((m) => JSON.parse(m.Body))).toContainEqual(
      expect.objectContaining({
        'detail-type': BATCH_COMMITTED,
        detail: expect.objectContaining({ table: 'orders' }),
      }),
    );
  }, 180_000);
});

/** A ledger key as the DynamoDB API (and so the CLI) takes it: attribute values typed. */
function ddbKey(key: Record<string, string>): Record<string, { S: string }> {
  return Object.fromEntries(Object.entries(key).map(([k, v]) => [k, { S: v }]));
}

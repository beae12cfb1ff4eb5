import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { bringUpLocalStack, type LocalStack } from '../../local/local-stack.ts';
import { glueDatabaseOf, localConfigOf } from '../../local/state.ts';
import { withBronzeFields } from '../../local/summary.ts';
import { configFromEnv } from '../../shared/config/pipeline-config.ts';
import { OUTPUTS } from '../../shared/kernel/names.ts';
import { projectRoot } from '../../shared/kernel/project-root.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { waitForLambdaRuntime } from '../support/lambda-runtime.ts';
import { startTestRunner } from '../support/local-runner.ts';

// What `inlet` prints against a local pipeline with data in it: a human table in a pseudo-terminal
// (`script`, so stdout is a TTY of a known width), and clean JSON with the exact values for scripts.

const target = testTarget();
// The runtime the bundles run under: `npm test` may still be building it (test/support/lambda-runtime.ts).
await waitForLambdaRuntime();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const clients = testClients();
const scratch = mkdtempSync(join(tmpdir(), 'inlet-cli-output-'));
const state = join(scratch, 'state');
/** The temp folder every run here uses (bring-up in this process, the CLI in children): checked at the end. */
const temp = join(scratch, 'tmp');
mkdirSync(temp);
const LONG_BODY = `not json: ${'x'.repeat(400)}`;
let stack: LocalStack;

function withTemp<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  return fn().finally(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  });
}

const cliEnv = () => {
  // The CLI must quiet the SDK itself: drop anything the test runner's environment does for it.
  const { NODE_NO_WARNINGS: _a, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _b, ...env } = process.env;
  return { ...env, TMPDIR: temp, INLET_STATE_DIR: state };
};
const bin = join(projectRoot, 'cli', 'bin.mjs');

/** A child process's outcome; asynchronous, so a test's calls (each mostly the CLI's start-up) overlap. */
function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const options = { cwd: projectRoot, env: { ...cliEnv(), ...env }, encoding: 'utf8' as const };
    execFile(file, args, options, (error, stdout, stderr) =>
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `inlet ARGS` with stdout on a pipe (what a script sees). */
function inlet(...args: string[]) {
  return run(process.execPath, [bin, ...args]);
}

/** `inlet ARGS` in a pseudo-terminal `columns` wide (what a person sees); stdout and stderr merged. */
async function inletTty(columns: number, ...args: string[]): Promise<string> {
  const command = `stty cols ${columns} rows 50; '${process.execPath}' '${bin}' ${args.join(' ')}`;
  const r = await run('script', ['-q', '-e', '-c', command, '/dev/null']);
  expect(r.status, r.stdout + r.stderr).toBe(0);
  return r.stdout.replace(/\r/g, '');
}

beforeAll(async () => {
  if (target.kind !== 'emulator') return;
  stack = await withTemp(() =>
    bringUpLocalStack(clients, {
      'inlet:stackName': uniqueName('InletCli'),
      // Batches of 10 need no batching window: the one file is claimed at once, not a window later.
      'inlet:batchSize': 10,
    }),
  );
  const o = stack.outputs;
  mkdirSync(state, { recursive: true });
  const local = localConfigOf(stack, endpoint, 'us-east-1');
  // As `npm start` writes it: the bronze tables with their location and Glue entry.
  const tables = withBronzeFields(
    stack.tables,
    configFromEnv(stack.environment.Committer),
    o[OUTPUTS.manifestBucket] ?? '',
    glueDatabaseOf(stack),
  );
  writeFileSync(join(state, 'local.json'), JSON.stringify({ ...local, tables }));
  // One 3 KiB file committed, one unreadable message quarantined with a body wider than any terminal.
  await clients.s3.send(
    new PutObjectCommand({
      Bucket: o[OUTPUTS.landingBucket],
      Key: 'orders/cli/one.json',
      Body: JSON.stringify({ pad: 'p'.repeat(3 * 1024) }),
    }),
  );
  await clients.sqs.send(
    new SendMessageCommand({ QueueUrl: o[OUTPUTS.ingestQueueUrl], MessageBody: LONG_BODY }),
  );
  // The bronze table `clicks` (CSV) gets two versions of one small file each, for its maintenance to compact.
  const click = (n: number) =>
    clients.s3.send(
      new PutObjectCommand({
        Bucket: o[OUTPUTS.landingBucket],
        Key: `clicks/${n}.json`,
        Body: `id,page\n${n},p${n}\n`,
      }),
    );
  await click(1);
  const runner = await startTestRunner(stack, { clients, endpoint, region: 'us-east-1' });
  try {
    await runner.runner.untilQuiet(undefined, 90_000);
    await click(2);
    await runner.runner.untilQuiet(undefined, 90_000);
    // The table's maintenance schedule fired as local mode fires it: the synthesized bundle, as its role,
    // every call through the IAM check (whose mutation check then covers the maintenance role's grants).
    const schedule = stack.schedules.find((s) => (s.input as { table?: string })?.table === 'clicks');
    expect(schedule).toBeDefined();
    if (schedule) await runner.runner.fire(schedule);
    expect(runner.runner.failures).toEqual([]);
  } finally {
    await runner.stop();
  }
}, 240_000);

afterAll(() => {
  destroyClients(clients);
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(target.kind !== 'emulator')('inlet output against a local pipeline', () => {
  it('status: sizes in KiB and the last commit as a relative time for a person; exact values in --json', async () => {
    const [human, { status, stdout, stderr }] = await Promise.all([
      inletTty(100, 'status'),
      inlet('--json', 'status'),
    ]);
    expect(human).toMatch(/orders: head v1, 1 files, 3\.0 KiB, last commit (just now|\d+ s ago|\d+ min ago)/);

    expect(status, stderr).toBe(0);
    const json = JSON.parse(stdout);
    const orders = json.tables.find((t: { name: string }) => t.name === 'orders');
    expect(orders.bytes).toBeGreaterThan(3 * 1024);
    expect(Number.isInteger(orders.bytes)).toBe(true);
    expect(new Date(orders.lastCommitAt).toISOString()).toBe(orders.lastCommitAt);
    expect(stderr).not.toMatch(/NodeVersionSupportWarning/);
  });

  it('quarantine: the table fits the terminal, the full body is in --json', async () => {
    const [tty, { stdout }] = await Promise.all([inletTty(60, 'quarantine'), inlet('--json', 'quarantine')]);
    const lines = tty.split('\n').filter(Boolean);
    const table = lines.filter((l) => !/is end-of-life/.test(l));
    expect(table[0]).toMatch(/^id\s+sentAt\s+reason\s+body/);
    for (const line of table) expect(line.length).toBeLessThanOrEqual(60);
    expect(table.some((l) => l.endsWith('…'))).toBe(true);

    const entries = JSON.parse(stdout) as Array<{ body: string; sentAt: string }>;
    expect(entries.map((e) => e.body)).toContain(LONG_BODY);
  });

  it('manifests: sizes and times readable in the table, exact in --json', async () => {
    const [tty, json] = await Promise.all([
      inletTty(200, 'manifests', '--table', 'orders'),
      inlet('--json', 'manifests', '--table', 'orders'),
    ]);
    expect(tty).toMatch(/orders\s+1\s+(just now|\d+ s ago|\d+ min ago)\s+1\s+3\.0 KiB/);
    const [manifest] = JSON.parse(json.stdout);
    expect(manifest.bytes).toBeGreaterThan(3 * 1024);
  });

  it('table: what the scheduled maintenance did (the last optimize, the last vacuum) beside the live files and bytes', async () => {
    const [tty, json] = await Promise.all([
      inletTty(200, 'table', 'clicks'),
      inlet('--json', 'table', 'clicks'),
    ]);
    expect(json.status, json.stderr).toBe(0);
    const table = JSON.parse(json.stdout);
    expect(table.rows).toBe(2);
    // Two one-file versions compacted into one file, committed as the third Delta version (0-based 2).
    expect(table.dataFiles).toBe(1);
    expect(table.deltaVersion).toBe(2);
    expect(table.maintenance.optimize).toMatchObject({
      version: 2,
      commits: 1,
      filesRemoved: 2,
      filesAdded: 1,
    });
    expect(table.maintenance.vacuum).toMatchObject({ filesDeleted: 0, retentionHours: 168 });
    expect(table.dataBytes).toBe(table.maintenance.optimize.bytesAdded);
    expect(tty).toMatch(/data files 1 \(\d+ B\)/);
    expect(tty).toMatch(
      /optimize\s+version 2, (just now|\d+ s ago|\d+ min ago): 2 files \([\d.]+ K?i?B\) rewritten as 1 \([\d.]+ K?i?B\)/,
    );
    expect(tty).toMatch(
      /vacuum\s+(just now|\d+ s ago|\d+ min ago): 0 files deleted \(0 B\), retention 168 h/,
    );
  });

  it("table --stack: a deployed stack's table found from its outputs, as local mode finds it, no --location needed", async () => {
    // The stack read through CloudFormation (DescribeStacks), as `inlet --stack NAME` does on AWS.
    const [local, deployed] = await Promise.all([
      inlet('--json', 'table', 'clicks'),
      run(process.execPath, [bin, '--stack', stack.stackName, '--json', 'table', 'clicks'], {
        INLET_AWS_ENDPOINT: endpoint,
        AWS_REGION: 'us-east-1',
      }),
    ]);
    expect(deployed.status, deployed.stderr).toBe(0);
    expect(JSON.parse(deployed.stdout)).toEqual(JSON.parse(local.stdout));
  });

  it('leaves nothing in the temp folder: not the synth, not the asset upload, not the CLI', () => {
    // tsx keeps one reused compile cache there (tsx-<uid>): tsx's, not a pile-up of ours.
    expect(readdirSync(temp).filter((name) => !/^tsx-\d+$/.test(name))).toEqual([]);
  });
});

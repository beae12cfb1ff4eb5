import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/paths.ts';
import { testTarget, uniqueName } from '../support/aws.ts';
import { waitForLambdaRuntime } from '../support/lambda-runtime.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'inlet-local-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
const target = testTarget();
// The runtime the bundles run under: `npm test` may still be building it (test/support/lambda-runtime.ts).
await waitForLambdaRuntime();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const stackName = uniqueName('InletLocal');
const env = { ...process.env, INLET_STATE_DIR: stateDir, NODE_NO_WARNINGS: '1' };
const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');
// The CLI as `npx inlet` runs it: its bin, which starts the esbuild bundle (rebuilt first if a source is newer),
// not the TypeScript through tsx (about a second more per command). `npm start` is `tsx cli/start.ts`.
const inletBin = join(projectRoot, 'cli', 'bin.mjs');

function inlet(
  args: string[],
  runEnv: NodeJS.ProcessEnv = env,
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [inletBin, ...args], {
    cwd: projectRoot,
    env: runEnv,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Fails with the tail of what a child printed, instead of a bare test timeout, when it hangs. */
function hung(what: string, ms: number, stderr: () => string): Error {
  return new Error(`${what} within ${ms / 1000} s; its stderr ends:\n${stderr().slice(-2000)}`);
}

const START_TIMEOUT_MS = 500_000;

/** Processes whose command line names `marker`, once those dying of a kill are gone (up to 10 s). */
async function survivors(marker: string): Promise<string[]> {
  let found: string[] = [];
  for (let i = 0; i < 20; i++) {
    const ps = spawnSync('pgrep', ['-af', marker], { encoding: 'utf8' });
    found = ps.stdout.split('\n').filter((line) => line.trim() !== '');
    if (found.length === 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return found;
}

function start(
  args: string[],
  options: { stack?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      tsx,
      [
        join(projectRoot, 'cli', 'start.ts'),
        '--endpoint',
        endpoint,
        '--stack-name',
        options.stack ?? stackName,
        '--no-view',
        ...args,
      ],
      {
        cwd: projectRoot,
        env: options.env ?? env,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(hung(`npm start ${args.join(' ')} did not exit`, START_TIMEOUT_MS, () => stderr));
    }, START_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(target.kind !== 'emulator')('local mode and the inlet CLI', () => {
  it('npm start --demo --available-now commits or quarantines every demo file, then the CLI shows where each is', async () => {
    const run = await start(['--demo', '--available-now', '--files-per-table', '8']);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}');
    expect(summary.committed + summary.quarantined).toBe(summary.files);
    expect(summary.quarantined).toBe(3);
    expect(summary.duplicatesDropped).toBeGreaterThanOrEqual(1);
    // Every call each function made was checked against its role from the template, and none was denied.
    expect(summary.iamDenied).toBe(0);
    const decisions = readFileSync(join(stateDir, 'iam-decisions.jsonl'), 'utf8').trim().split('\n');
    const callers = new Set(decisions.map((line) => (JSON.parse(line) as { caller: string }).caller));
    expect([...callers]).toEqual(expect.arrayContaining(['Batcher', 'Committer', 'Sink']));
    expect(existsSync(join(stateDir, 'local.json'))).toBe(true);
    const local = JSON.parse(readFileSync(join(stateDir, 'local.json'), 'utf8'));
    expect(local).toMatchObject({
      endpoint,
      region: 'us-east-1',
      tables: [
        { name: 'orders', prefix: 'orders/' },
        { name: 'clicks', prefix: 'clicks/' },
      ],
    });
    for (const key of ['landingBucket', 'manifestBucket', 'ledgerTable', 'ingestQueueUrl'])
      expect(local[key]).toBeTruthy();

    const status = JSON.parse(inlet(['--json', 'status']).stdout);
    expect(status.tables.map((t: { name: string; head: number }) => t.head > 0)).toEqual([true, true]);
    expect(status.tables.reduce((n: number, t: { files: number }) => n + t.files, 0)).toBe(summary.committed);
    expect(status.queues.ingestDlq.visible).toBe(0);

    const manifests = JSON.parse(inlet(['--json', 'manifests', '--table', 'orders']).stdout);
    expect(manifests.map((m: { version: number }) => m.version)).toEqual(
      manifests.map((_: unknown, i: number) => i + 1),
    );

    const files = JSON.parse(inlet(['--json', 'files', 'orders/awkward/']).stdout);
    expect(files.map((f: { key: string }) => f.key)).toContain('orders/awkward/a b+c.json');
    expect(files.every((f: { state: string }) => /^committed in v\d+$/.test(f.state))).toBe(true);

    const quarantined = JSON.parse(inlet(['--json', 'quarantine']).stdout);
    expect(quarantined.map((q: { reason: string }) => q.reason)).toContain('message body is not JSON');

    // A file dropped with `inlet put` is ingested by the next run; that run with AWS's latencies: each call a
    // function's process makes is held by the latency proxy, then checked by the IAM check as its role.
    const file = join(stateDir, 'dropped.json');
    writeFileSync(file, '{"hello":"inlet"}\n');
    expect(inlet(['put', file, '--table', 'clicks']).status).toBe(0);
    const slow = await start(['--available-now', '--aws-latency']);
    expect(slow.code, slow.stderr).toBe(0);
    const slowSummary = JSON.parse(slow.stdout.trim().split('\n').pop() ?? '{}');
    expect(slowSummary).toMatchObject({ committed: 1, iamDenied: 0 });
    // The claim (PutItem) and the seal and commit (TransactWriteItems) are made only by the functions'
    // processes; ReceiveMessage by the event source mappings'.
    expect(slowSummary.requestsHeld).toMatchObject({
      'dynamodb:PutItem': expect.any(Number),
      'dynamodb:TransactWriteItems': expect.any(Number),
      'sqs:ReceiveMessage': expect.any(Number),
    });
    const slowCallers = readFileSync(join(stateDir, 'iam-decisions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { caller: string; operation: string });
    expect(slowCallers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ caller: 'Batcher', operation: 'dynamodb:PutItem' }),
        expect.objectContaining({ caller: 'Committer', operation: 'dynamodb:TransactWriteItems' }),
      ]),
    );
    const dropped = JSON.parse(inlet(['--json', 'files', 'clicks/dropped.json']).stdout);
    expect(dropped).toEqual([
      expect.objectContaining({
        key: 'clicks/dropped.json',
        state: expect.stringMatching(/^committed in v\d+$/),
      }),
    ]);

    expect(inlet(['--json', 'dlq', 'redrive']).stdout.trim()).toBe('{"ingest":0,"commit":0}');
  }, 600_000);

  it('says what is wrong in one line', () => {
    const unknown = inlet(['put', 'README.md', '--table', 'nope']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim().split('\n').pop()).toBe(
      "inlet: unknown table 'nope'; tables: orders, clicks",
    );
    const noLocal = inlet(['status'], { ...env, INLET_STATE_DIR: join(stateDir, 'missing') });
    expect(noLocal.status).toBe(1);
    expect(noLocal.stderr).toMatch(/inlet: no local pipeline .* run `npm start`, or pass --stack NAME/);
  });
});

describe.skipIf(target.kind !== 'emulator')('a pipeline killed with SIGKILL mid-batch', () => {
  it('loses nothing and duplicates nothing once it is started again', async () => {
    const killedStack = uniqueName('InletKill');
    const killedState = mkdtempSync(join(tmpdir(), 'inlet-kill-'));
    const killedEnv = { ...env, INLET_STATE_DIR: killedState };
    // Short timings: the killed run's messages come back after 18 s (not 30) and its claims expire after 6 s
    // (not 10). Recovery is the same code whatever the timings; only the wait is shorter. Not 1 s: a cold
    // start's init counts into the first invocation's timeout under the Runtime Interface Emulator.
    const timings = ['--timeout-seconds', '3'];
    const args = ['--endpoint', endpoint, '--stack-name', killedStack, '--no-view', ...timings];
    // Run 1: the pipeline works while the demo uploads; it is killed the moment the uploads are done,
    // with batches in flight (claims made, lists staged or sealed, commits pending).
    const first = spawn(
      tsx,
      [join(projectRoot, 'cli', 'start.ts'), ...args, '--demo', '--files-per-table', '30'],
      // Its own process group, so the kill reaches every process of it (tsx runs the CLI in a child,
      // which a SIGKILL of tsx alone leaves running), as a crash takes the whole machine.
      { cwd: projectRoot, env: killedEnv, detached: true },
    );
    let firstErr = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            hung("run 1 did not print '[inlet] demo:' (uploads done)", START_TIMEOUT_MS, () => firstErr),
          ),
        START_TIMEOUT_MS,
      );
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      first.stderr.on('data', (d) => {
        firstErr += d;
        if (firstErr.includes('[inlet] demo:')) done();
      });
      first.once('exit', done);
    });
    expect(first.exitCode, `run 1 ended before its kill:\n${firstErr.slice(-2000)}`).toBeNull();
    const exited = new Promise((resolve) => first.once('exit', resolve));
    process.kill(-(first.pid as number), 'SIGKILL');
    await exited;
    // Run 1 is dead, every process of it: a survivor would go on working beside run 2 (and writing its
    // state), so the test would show a pipeline that was never killed.
    expect(await survivors(killedStack)).toEqual([]);

    // Run 2: the same emulator and stack; messages in flight come back after their visibility timeout.
    const second = await start(['--available-now', ...timings], { stack: killedStack, env: killedEnv });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/found \(resuming\)/);

    const local = JSON.parse(readFileSync(join(killedState, 'local.json'), 'utf8'));
    const { createClients, destroyClients } = await import('../../local/aws/clients.ts');
    const clients = createClients(target);
    // The timings reached the stack: 6x the 3 s function timeout.
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: local.ingestQueueUrl,
        AttributeNames: ['VisibilityTimeout'],
      }),
    );
    expect(Attributes?.VisibilityTimeout).toBe('18');
    const { S3BatchStore } = await import('../../shared/ingestion/aws/s3-batch-store.ts');
    const { demoKeys } = await import('../../local/demo.ts');
    const store = new S3BatchStore({ client: clients.s3, bucket: local.manifestBucket });
    const seen = new Map<string, number>();
    for (const { name } of local.tables as Array<{ name: string }>) {
      const versions = await store.listManifestVersions(name);
      expect(versions).toEqual(versions.map((_, i) => i + 1));
      for (const version of versions) {
        for (const file of (await store.getManifest(name, version))?.files ?? []) {
          seen.set(`${name}|${file.key}`, (seen.get(`${name}|${file.key}`) ?? 0) + 1);
        }
      }
    }
    const expected = demoKeys(local.tables, 30)
      .filter((key) => !key.endsWith('/') && !key.includes('_temporary') && !key.endsWith('.tmp'))
      .map((key) => `${key.split('/')[0]}|${key}`);
    const lost = expected.filter((k) => !seen.has(k));
    const duplicated = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
    expect({ lost, duplicated }).toEqual({ lost: [], duplicated: [] });
    expect(seen.size).toBe(expected.length);
    destroyClients(clients);
    rmSync(killedState, { recursive: true, force: true });
  }, 600_000);
});

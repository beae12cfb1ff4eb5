import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/paths.ts';
import { testTarget, uniqueName } from '../support/aws.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'inlet-local-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
const target = testTarget();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const stackName = uniqueName('InletLocal');
const env = { ...process.env, INLET_STATE_DIR: stateDir, NODE_NO_WARNINGS: '1' };
const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');

function inlet(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(tsx, [join(projectRoot, 'cli', 'inlet.ts'), ...args], {
    cwd: projectRoot,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function start(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      tsx,
      [
        join(projectRoot, 'cli', 'start.ts'),
        '--endpoint',
        endpoint,
        '--stack-name',
        stackName,
        '--no-view',
        ...args,
      ],
      {
        cwd: projectRoot,
        env,
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
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
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

    const status = JSON.parse(inlet('--json', 'status').stdout);
    expect(status.tables.map((t: { name: string; head: number }) => t.head > 0)).toEqual([true, true]);
    expect(status.tables.reduce((n: number, t: { files: number }) => n + t.files, 0)).toBe(summary.committed);
    expect(status.queues.ingestDlq.visible).toBe(0);

    const manifests = JSON.parse(inlet('--json', 'manifests', '--table', 'orders').stdout);
    expect(manifests.map((m: { version: number }) => m.version)).toEqual(
      manifests.map((_: unknown, i: number) => i + 1),
    );

    const files = JSON.parse(inlet('--json', 'files', 'orders/awkward/').stdout);
    expect(files.map((f: { key: string }) => f.key)).toContain('orders/awkward/a b+c.json');
    expect(files.every((f: { state: string }) => /^committed in v\d+$/.test(f.state))).toBe(true);

    const quarantined = JSON.parse(inlet('--json', 'quarantine').stdout);
    expect(quarantined.map((q: { reason: string }) => q.reason)).toContain('message body is not JSON');

    // A file dropped with `inlet put` is ingested by the next run.
    const file = join(stateDir, 'dropped.json');
    writeFileSync(file, '{"hello":"inlet"}\n');
    expect(inlet('put', file, '--table', 'clicks').status).toBe(0);
    expect((await start(['--available-now'])).code).toBe(0);
    const dropped = JSON.parse(inlet('--json', 'files', 'clicks/dropped.json').stdout);
    expect(dropped).toEqual([
      expect.objectContaining({
        key: 'clicks/dropped.json',
        state: expect.stringMatching(/^committed in v\d+$/),
      }),
    ]);

    expect(inlet('--json', 'dlq', 'redrive').stdout.trim()).toBe('{"ingest":0,"commit":0}');
  }, 240_000);

  it('says what is wrong in one line', () => {
    const unknown = inlet('put', 'README.md', '--table', 'nope');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim().split('\n').pop()).toBe(
      "inlet: unknown table 'nope'; tables: orders, clicks",
    );
    const noLocal = spawnSync(tsx, [join(projectRoot, 'cli', 'inlet.ts'), 'status'], {
      cwd: projectRoot,
      env: { ...env, INLET_STATE_DIR: join(stateDir, 'missing') },
      encoding: 'utf8',
    });
    expect(noLocal.status).toBe(1);
    expect(noLocal.stderr).toMatch(/inlet: no local mode here .* run `npm start`, or pass --stack NAME/);
  });
});

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../shared/kernel/project-root.ts';

// The CLI as a person starts it (its bin), with no pipeline behind it: help, typos, a missing local mode,
// the Node line. Every run gets a private temp folder, checked at the end for anything left behind.

const scratch = mkdtempSync(join(tmpdir(), 'inlet-cli-help-'));
const temp = join(scratch, 'tmp');
const state = join(scratch, 'state');
mkdirSync(temp);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function inlet(args: string[], env: NodeJS.ProcessEnv = {}) {
  const {
    NODE_NO_WARNINGS: _quiet,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _optOut,
    ...base
  } = process.env;
  const result = spawnSync(process.execPath, [join(projectRoot, 'cli', 'bin.mjs'), ...args], {
    cwd: projectRoot,
    env: { ...base, TMPDIR: temp, INLET_STATE_DIR: state, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const COMMANDS = [
  ['status'],
  ['files'],
  ['manifests'],
  ['quarantine'],
  ['dlq', 'redrive'],
  ['put'],
  ['backfill', 'start'],
  ['backfill', 'status'],
  ['down'],
];

describe('inlet at the terminal', () => {
  it.each(COMMANDS.map((command) => ({ name: command.join(' '), command })))(
    '`inlet $name --help` shows examples of it',
    ({ command }) => {
      const { status, stdout } = inlet([...command, '--help']);
      expect(status).toBe(0);
      expect(stdout).toMatch(/\nExamples:\n/);
      expect(stdout).toContain(`$ inlet ${command.join(' ')}`);
    },
  );

  it('answers an unknown command with the nearest one and what to run', () => {
    const { status, stdout, stderr } = inlet(['stauts']);
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain("unknown command 'stauts'");
    expect(stderr).toMatch(/Did you mean status\?/);
    expect(stderr).toContain('npx inlet --help');
  });

  it('without a local pipeline says to run `npm start`, in one line and nothing on stdout', () => {
    const { status, stdout, stderr } = inlet(['--json', 'status']);
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n').pop()).toBe(
      'inlet: no local pipeline (.inlet/local.json is missing): run `npm start`, or pass --stack NAME for a deployed stack',
    );
  });

  it('prints no AWS SDK NodeVersionSupportWarning, only our own line on Node < 22, once', () => {
    // A command that builds SDK clients and calls AWS (a closed port: it fails after the SDK's retries).
    const { status, stdout, stderr } = inlet(['--json', '--stack', 'Nope', 'status'], {
      INLET_AWS_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK for JavaScript/);
    const ours = stderr.split('\n').filter((l) => /is end-of-life/.test(l));
    expect(ours).toHaveLength(Number.parseInt(process.versions.node, 10) < 22 ? 1 : 0);
    expect(stderr).toMatch(/inlet: cannot read stack 'Nope'/);
  });

  it('leaves nothing in the temp folder but tsx’s compile cache', () => {
    inlet(['--help']);
    // tsx keeps one reused cache folder (tsx-<uid>) there: it is tsx's, not a pile-up of ours.
    expect(readdirSync(temp).filter((name) => !/^tsx-\d+$/.test(name))).toEqual([]);
  });

  it('runs from a bundle that names every source it was built from, so an edited source is rebuilt', () => {
    expect(inlet(['--help']).status).toBe(0);
    const stamp = JSON.parse(readFileSync(join(projectRoot, 'cli', 'dist', 'inputs.json'), 'utf8'));
    // bin.mjs compares these files' times with builtAt: a source left out would keep a stale bundle running.
    expect(stamp.inputs).toEqual(expect.arrayContaining(['cli/inlet.ts', 'cli/commands/status.ts']));
    expect(stamp.inputs.some((p: string) => p.startsWith('shared/'))).toBe(true);
    for (const input of stamp.inputs)
      expect(statSync(join(projectRoot, input)).mtimeMs).toBeLessThanOrEqual(stamp.builtAt);
  });
});

describe('npm start at the terminal', () => {
  // An unreachable endpoint, so a flag that slipped through fails on the network instead of starting a
  // background emulator from a unit test.
  const start = (...args: string[]) =>
    spawnSync(
      join(projectRoot, 'node_modules', '.bin', 'tsx'),
      [join(projectRoot, 'cli', 'start.ts'), '--endpoint', 'http://127.0.0.1:9', ...args],
      {
        cwd: projectRoot,
        env: { ...process.env, INLET_STATE_DIR: state },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );

  it.each([
    ['--timeout-seconds', '0', 'an integer from 1 to 900'],
    ['--timeout-seconds', '1.5', 'an integer from 1 to 900'],
    ['--files-per-table', 'ten', 'an integer from 1 to 10000'],
  ])('refuses %s %s before anything starts', (flag, value, rule) => {
    const run = start(flag, value);
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(`error: option '${flag} <n>' argument '${value}' is invalid. ${rule}`);
    expect(run.stderr).not.toMatch(/emulator/);
  });
});

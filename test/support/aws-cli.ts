import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot, venvDir } from '../../local/paths.ts';

// The AWS CLI (v1, pinned in emulator/requirements.txt) from the project venv, against an endpoint, as a
// user runs it against local mode: dummy credentials, the emulator's region, JSON output.

export interface CliResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

const aws = join(venvDir, 'bin', 'aws');

function environment(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_PAGER: '',
    // No ~/.aws of the machine's user: the same CLI everywhere.
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  };
}

const common = (endpoint: string) => ['--endpoint-url', endpoint, '--output', 'json'];

/** One `aws ...` process, as typed at a shell. */
export function awsCli(endpoint: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      aws,
      [...args, ...common(endpoint)],
      { env: environment(), encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Several `aws ...` commands in one process (test/support/aws_cli_batch.py): the same CLI code per command,
 * its start-up (about a second of CPU) paid once.
 */
export function awsCliBatch(endpoint: string, calls: ReadonlyArray<readonly string[]>): Promise<CliResult[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      join(venvDir, 'bin', 'python'),
      [join(projectRoot, 'test', 'support', 'aws_cli_batch.py')],
      { env: environment(), encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`aws CLI batch failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as CliResult[]);
      },
    );
    child.stdin?.end(JSON.stringify(calls.map((args) => [...args, ...common(endpoint)])));
  });
}

/** A command's JSON output, or a failure naming the command and what it printed. */
export function json<T = Record<string, unknown>>(result: CliResult | undefined, what = 'aws'): T {
  if (!result) throw new Error(`${what}: no such result`);
  if (result.status !== 0) throw new Error(`${what} exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout || '{}') as T;
}

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalBackfill, readExecutionRecord } from '../../local/backfill-executor.ts';
import { emulatorAccess } from '../../local/lambda/access.ts';
import { LambdaHost } from '../../local/lambda/host.ts';
import { installedLambdaRuntime } from '../../local/lambda/install.ts';
import { projectRoot } from '../../local/paths.ts';
import { backfillRecordsDir } from '../../local/state.ts';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { CliError } from '../errors.ts';
import type { CliTarget } from '../target.ts';
import { type Backfills, lastSegment, parseCause, type RunView, resumeHint } from './run-view.ts';

/**
 * How to start the background worker: bundled next to this code when the CLI runs from its bundle
 * (cli/dist, built with the worker as a second entry), else its source through tsx.
 */
function workerCommand(): string[] {
  const here = import.meta.url;
  if (/\/cli\/dist\/[^/]+\.js$/.test(here)) return [fileURLToPath(new URL('./backfill-worker.js', here))];
  return ['--import', 'tsx', join(projectRoot, 'cli', 'backfill-worker.ts')];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Local mode: the deployed definition runs in an ASL interpreter (local/backfill-executor.ts), in this
 * process with --wait, else in a detached worker; records in .inlet/backfills/ make `status` work from
 * any terminal. The ingestion itself is `npm start`'s job, as Lambda's would be.
 */
export class LocalBackfills implements Backfills {
  constructor(private readonly target: CliTarget) {}

  async start(input: Record<string, unknown>, name: string, wait: boolean): Promise<string> {
    if (!wait) {
      const worker = spawn(process.execPath, [...workerCommand(), name, JSON.stringify(input)], {
        cwd: projectRoot,
        detached: true,
        stdio: 'ignore',
        env: process.env,
      });
      worker.unref();
      // The worker writes the record when the execution starts; wait for it, so `status` finds it.
      for (let i = 0; i < 300 && !readExecutionRecord(backfillRecordsDir, name); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      if (!readExecutionRecord(backfillRecordsDir, name))
        throw new CliError(`the backfill worker did not start ${name} within 30 s`);
      return name;
    }
    const executor = localExecutor(this.target);
    await executor.start(input, name);
    // Runs on in this process; `view` reads the records it writes. The function processes stop when the run
    // ends, so the CLI exits once it has reported it.
    void executor.waitForRun(name).finally(() => executor.close());
    return name;
  }

  async view(execution: string): Promise<RunView> {
    const executions: string[] = [];
    let name = lastSegment(execution);
    let firstInput: Record<string, unknown> | undefined;
    for (;;) {
      const record = readExecutionRecord(backfillRecordsDir, name);
      if (!record) {
        if (executions.length === 0) throw new CliError(`no local backfill execution '${name}'`);
        // The continuation is about to write its first record.
        return { execution: name, status: 'RUNNING', executions };
      }
      executions.push(record.executionArn);
      firstInput ??= record.input as Record<string, unknown>;
      if (record.status === 'SUCCEEDED' && record.continuedAs) {
        name = lastSegment(record.continuedAs);
        continue;
      }
      if (record.status === 'SUCCEEDED')
        return {
          execution: record.executionArn,
          status: record.status,
          executions,
          summary: record.output as BackfillSummary,
        };
      if (record.status === 'RUNNING' && alive(record.pid))
        return {
          execution: record.executionArn,
          status: 'RUNNING',
          executions,
          ...(record.progress ? { summary: record.progress } : {}),
        };
      const interrupted = record.status === 'RUNNING';
      const { summary, detail } = interrupted
        ? { summary: record.progress, detail: undefined }
        : parseCause(record.cause);
      return {
        execution: record.executionArn,
        status: interrupted ? 'INTERRUPTED' : record.status,
        executions,
        ...(summary ? { summary } : {}),
        error: interrupted ? 'ProcessExited' : (record.error ?? 'Error'),
        cause: interrupted
          ? `the process running it (pid ${record.pid}) exited`
          : (detail ?? record.cause ?? ''),
        resume: resumeHint(firstInput, summary),
      };
    }
  }
}

/**
 * The executor for the local stack: its Lambda tasks run the backfill function's bundle (local/lambda/host.ts),
 * as `npm start` runs the other functions. The functions' processes end with this one.
 */
export function localExecutor(target: CliTarget): LocalBackfill {
  const runtime = installedLambdaRuntime();
  if (!runtime || !target.functions)
    throw new CliError(
      runtime
        ? '.inlet/local.json names no functions (it predates local mode running bundles): run `npm start` again'
        : 'the Lambda runtime is not installed: run `npm start` first',
    );
  const lambda = new LambdaHost({
    lambda: target.clients.lambda,
    functions: target.functions,
    runtime,
    region: target.region ?? 'us-east-1',
    access: emulatorAccess(target.endpoint ?? ''),
  });
  return new LocalBackfill({
    clients: target.clients,
    stateMachineArn: target.backfillStateMachineArn,
    lambda,
    recordsDir: backfillRecordsDir,
  });
}

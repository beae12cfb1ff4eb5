import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { SingleBar } from 'cli-progress';
import { BACKFILL_STATES } from '../../infra/backfill.ts';
import { executionArn, LocalBackfill, readExecutionRecord } from '../../local/backfill-executor.ts';
import { projectRoot } from '../../local/paths.ts';
import { backfillRecordsDir } from '../../local/state.ts';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { MemoryMetrics } from '../../shared/metrics.ts';
import { CliError, type CliTarget, requireTable } from '../target.ts';

export interface StartOptions {
  readonly table: string;
  readonly prefix?: string;
  readonly startAfter?: string;
  readonly modifiedAfter?: string;
  readonly modifiedBefore?: string;
  readonly glob?: string;
  readonly maxObjects?: number;
  readonly dryRun: boolean;
  readonly wait: boolean;
  readonly name?: string;
  readonly json: boolean;
}

/** A run (an execution and its continuations) as the CLI shows it. */
export interface RunView {
  readonly execution: string;
  readonly status: string;
  /** Every execution of the run, first to last. */
  readonly executions: string[];
  readonly summary?: BackfillSummary;
  readonly error?: string;
  readonly cause?: string;
  /** For a failed or interrupted run: how to go on from where it stopped. */
  readonly resume?: string;
}

interface Backfills {
  start(input: Record<string, unknown>, name: string, wait: boolean): Promise<string>;
  view(execution: string): Promise<RunView>;
}

const lastSegment = (arnOrName: string) => arnOrName.split(':').at(-1) ?? arnOrName;

function resumeHint(input: Record<string, unknown> | undefined, summary: BackfillSummary | undefined) {
  if (!summary?.lastKey) return 'nothing was listed yet: start it again';
  const flags = [`--table ${summary.table}`];
  if (input?.prefix) flags.push(`--prefix '${input.prefix}'`);
  if (input?.modifiedAfter) flags.push(`--modified-after ${input.modifiedAfter}`);
  if (input?.modifiedBefore) flags.push(`--modified-before ${input.modifiedBefore}`);
  if (input?.glob) flags.push(`--glob '${input.glob}'`);
  return `inlet backfill start ${flags.join(' ')} --start-after '${summary.lastKey.replace(/'/g, "'\\''")}'`;
}

/** Failure causes carry the state at the failed step (infra/backfill.ts DescribeFailure). */
function parseCause(cause: string | undefined): { summary?: BackfillSummary; detail?: string } {
  try {
    const parsed = JSON.parse(cause ?? '') as {
      summary?: BackfillSummary;
      failure?: { Cause?: string };
    };
    return { summary: parsed.summary, detail: parsed.failure?.Cause };
  } catch {
    return { detail: cause };
  }
}

/** A deployed stack: Step Functions itself. */
class StepFunctionsBackfills implements Backfills {
  constructor(private readonly target: CliTarget) {}

  private arn(execution: string): string {
    if (execution.startsWith('arn:')) return execution;
    return executionArn(this.target.backfillStateMachineArn, execution);
  }

  async start(input: Record<string, unknown>, name: string): Promise<string> {
    const { executionArn } = await this.target.clients.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: this.target.backfillStateMachineArn,
        name,
        input: JSON.stringify(input),
      }),
    );
    return executionArn ?? this.arn(name);
  }

  /** The latest step's summary, from the execution history (newest first). */
  private async progress(executionArn: string): Promise<BackfillSummary | undefined> {
    const { events } = await this.target.clients.sfn.send(
      new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 30 }),
    );
    const exited = (events ?? []).find(
      (e: HistoryEvent) =>
        e.type === 'TaskStateExited' &&
        [BACKFILL_STATES.step, BACKFILL_STATES.plan].includes(
          e.stateExitedEventDetails?.name as 'Step' | 'Plan',
        ),
    );
    const output = exited?.stateExitedEventDetails?.output;
    return output ? (JSON.parse(output) as { summary?: BackfillSummary }).summary : undefined;
  }

  async view(execution: string): Promise<RunView> {
    const executions: string[] = [];
    let arn = this.arn(execution);
    let firstInput: Record<string, unknown> | undefined;
    for (;;) {
      executions.push(arn);
      const d = await this.target.clients.sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
      firstInput ??= JSON.parse(d.input ?? '{}');
      const status = d.status ?? 'UNKNOWN';
      if (status === 'SUCCEEDED') {
        const output = JSON.parse(d.output ?? '{}') as BackfillSummary & { continuedAs?: string };
        if (output.continuedAs) {
          arn = output.continuedAs;
          continue;
        }
        return { execution: arn, status, executions, summary: output };
      }
      if (status === 'RUNNING')
        return { execution: arn, status, executions, summary: await this.progress(arn) };
      const { summary, detail } = parseCause(d.cause);
      return {
        execution: arn,
        status,
        executions,
        ...(summary ? { summary } : {}),
        error: d.error ?? status,
        cause: detail ?? d.cause ?? '',
        resume: resumeHint(firstInput, summary),
      };
    }
  }
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
class LocalBackfills implements Backfills {
  constructor(private readonly target: CliTarget) {}

  async start(input: Record<string, unknown>, name: string, wait: boolean): Promise<string> {
    if (!wait) {
      const worker = spawn(
        process.execPath,
        ['--import', 'tsx', join(projectRoot, 'cli', 'backfill-worker.ts'), name, JSON.stringify(input)],
        { cwd: projectRoot, detached: true, stdio: 'ignore', env: process.env },
      );
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
    // Runs on in this process; `view` reads the records it writes.
    void executor.waitForRun(name);
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

export function localExecutor(target: CliTarget): LocalBackfill {
  return new LocalBackfill({
    clients: target.clients,
    stateMachineArn: target.backfillStateMachineArn,
    endpoint: target.endpoint ?? '',
    region: target.region ?? 'us-east-1',
    recordsDir: backfillRecordsDir,
    // The handler's logs and EMF metrics would interleave with the CLI's output; the records carry the counts.
    log: { debug() {}, info() {}, warn() {}, error() {} },
    metrics: new MemoryMetrics(),
  });
}

function backfills(target: CliTarget): Backfills {
  if (!target.backfillStateMachineArn)
    throw new CliError(
      target.local
        ? 'this local stack predates backfills: `npx inlet down`, then `npm start` creates it afresh'
        : 'this stack has no backfill state machine: deploy the current version',
    );
  return target.local ? new LocalBackfills(target) : new StepFunctionsBackfills(target);
}

/** Execution names: 1-80 of letters, digits, - and _; time-sortable. */
export function executionName(table: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${table.slice(0, 50)}-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

function print(view: RunView, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(view, null, 2));
    return;
  }
  const s = view.summary;
  console.log(`${lastSegment(view.execution)}: ${view.status}`);
  if (s) {
    console.log(
      `  ${s.dryRun ? 'dry run, ' : ''}listed ${s.listed}, matched ${s.matched}, ${
        s.dryRun ? `would enqueue ${s.wouldEnqueue}` : `enqueued ${s.enqueued}`
      }, already ingested ${s.alreadyIngested}; executions ${view.executions.length}; last key ${s.lastKey ?? '-'}`,
    );
  }
  if (view.error) console.log(`  ${view.error}: ${view.cause ?? ''}`);
  if (view.resume) console.log(`  resume: ${view.resume}`);
}

async function waitFor(service: Backfills, execution: string, json: boolean, maxObjects?: number) {
  const tty = process.stderr.isTTY && !json;
  const bar = tty
    ? new SingleBar({
        format:
          'backfill |{bar}| listed {value} · matched {matched} · enqueued {enqueued} · already {already} · {state}',
        hideCursor: true,
      })
    : undefined;
  bar?.start(maxObjects ?? 1000, 0, { matched: 0, enqueued: 0, already: 0, state: 'RUNNING' });
  let view = await service.view(execution);
  while (view.status === 'RUNNING') {
    const s = view.summary;
    if (s && bar) {
      // The total is unknown until the listing ends: it stays one page ahead of what was listed.
      bar.setTotal(maxObjects ?? (s.complete ? s.listed : s.listed + 1000));
      bar.update(s.listed, {
        matched: s.matched,
        enqueued: s.dryRun ? s.wouldEnqueue : s.enqueued,
        already: s.alreadyIngested,
        state: `execution ${view.executions.length}`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    view = await service.view(execution);
  }
  if (bar) {
    const s = view.summary;
    if (s) bar.setTotal(s.listed);
    bar.update(s?.listed ?? 0, {
      matched: s?.matched ?? 0,
      enqueued: (s?.dryRun ? s?.wouldEnqueue : s?.enqueued) ?? 0,
      already: s?.alreadyIngested ?? 0,
      state: view.status,
    });
    bar.stop();
  }
  return view;
}

export async function backfillStart(target: CliTarget, o: StartOptions): Promise<number> {
  requireTable(target, o.table);
  const input: Record<string, unknown> = { table: o.table };
  if (o.prefix !== undefined) input.prefix = o.prefix;
  if (o.startAfter !== undefined) input.startAfter = o.startAfter;
  if (o.modifiedAfter !== undefined) input.modifiedAfter = o.modifiedAfter;
  if (o.modifiedBefore !== undefined) input.modifiedBefore = o.modifiedBefore;
  if (o.glob !== undefined) input.glob = o.glob;
  if (o.maxObjects !== undefined) input.maxObjects = o.maxObjects;
  if (o.dryRun) input.dryRun = true;
  const service = backfills(target);
  const name = o.name ?? executionName(o.table);
  const execution = await service.start(input, name, o.wait);
  if (!o.wait) {
    if (o.json) console.log(JSON.stringify({ execution, status: 'RUNNING' }));
    else
      console.log(
        `started ${lastSegment(execution)}; follow it with: inlet backfill status ${lastSegment(execution)} --wait`,
      );
    return 0;
  }
  const view = await waitFor(service, execution, o.json, o.maxObjects);
  print(view, o.json);
  if (!o.json && view.status === 'SUCCEEDED' && target.local && !o.dryRun)
    console.log('  the running pipeline (npm start) ingests what was enqueued; `inlet status` shows it');
  return view.status === 'SUCCEEDED' ? 0 : 1;
}

export async function backfillStatus(
  target: CliTarget,
  execution: string,
  o: { wait: boolean; json: boolean },
): Promise<number> {
  const service = backfills(target);
  const view = o.wait ? await waitFor(service, execution, o.json) : await service.view(execution);
  print(view, o.json);
  return view.status === 'SUCCEEDED' || view.status === 'RUNNING' ? 0 : 1;
}

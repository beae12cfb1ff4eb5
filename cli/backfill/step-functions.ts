import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { BACKFILL_STATES } from '../../shared/kernel/names.ts';
import { CliError } from '../errors.ts';
import type { CliTarget } from '../target.ts';
import { type Backfills, lastSegment, parseCause, type RunView, resumeHint } from './run-view.ts';

/** An execution's ARN, from its state machine's and its name (as Step Functions forms it). */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * Backfills through Step Functions' API: on a deployed stack, and in local mode, where the emulator keeps
 * the executions and local mode's executor runs them (local/step-functions/) as Step Functions would.
 */
export class StepFunctionsBackfills implements Backfills {
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

  /**
   * The summary of the newest exit of one of `states`, from the execution history (newest first, paged until
   * found): a running run's progress is its last Step or Plan; a failed run's resume points are in its last
   * Merge when they did not fit the failure cause (at most 32,768 characters; a state's output 256 KiB).
   */
  private async lastSummary(
    executionArn: string,
    states: readonly string[],
  ): Promise<BackfillSummary | undefined> {
    let nextToken: string | undefined;
    do {
      const page = await this.target.clients.sfn.send(
        new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 100, nextToken }),
      );
      const exited = (page.events ?? []).find(
        (e: HistoryEvent) =>
          e.type === 'TaskStateExited' && states.includes(e.stateExitedEventDetails?.name ?? ''),
      );
      const output = exited?.stateExitedEventDetails?.output;
      if (output) return (JSON.parse(output) as { summary?: BackfillSummary }).summary;
      nextToken = page.nextToken;
    } while (nextToken);
    return undefined;
  }

  private progress(executionArn: string): Promise<BackfillSummary | undefined> {
    return this.lastSummary(executionArn, [BACKFILL_STATES.step, BACKFILL_STATES.plan]);
  }

  private async describe(arn: string) {
    try {
      return await this.target.clients.sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
    } catch (error) {
      if ((error as Error).name === 'ExecutionDoesNotExist')
        throw new CliError(`no backfill execution '${lastSegment(arn)}'`);
      throw error;
    }
  }

  async view(execution: string): Promise<RunView> {
    const executions: string[] = [];
    let arn = this.arn(execution);
    let firstInput: Record<string, unknown> | undefined;
    for (;;) {
      executions.push(arn);
      const d = await this.describe(arn);
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
      // A failed run's state machine names its summary in the cause (DescribeFailure), or says the resume
      // points are in its last Merge (a cause holds 32,768 characters); a run stopped some other way
      // (StopExecution, a timeout, local mode stopped) has it in its history.
      const parsed = parseCause(d.cause);
      const summary = parsed.summary?.resumeInHistory
        ? await this.lastSummary(arn, [BACKFILL_STATES.merge])
        : (parsed.summary ?? (await this.progress(arn)));
      return {
        execution: arn,
        status,
        executions,
        ...(summary ? { summary } : {}),
        error: d.error ?? status,
        cause: parsed.detail ?? d.cause ?? '',
        resume: resumeHint(firstInput, summary),
      };
    }
  }
}

import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { BACKFILL_STATES } from '../../shared/names.ts';
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
      // A failed run's state machine names its summary in the cause (DescribeFailure); a run stopped some
      // other way (StopExecution, a timeout, local mode stopped) has it in its history.
      const parsed = parseCause(d.cause);
      const summary = parsed.summary ?? (await this.progress(arn));
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

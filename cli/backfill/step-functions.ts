import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { executionArn } from '../../local/backfill-executor.ts';
import type { BackfillSummary } from '../../shared/backfill/request.ts';
import { BACKFILL_STATES } from '../../shared/names.ts';
import type { CliTarget } from '../target.ts';
import { type Backfills, parseCause, type RunView, resumeHint } from './run-view.ts';

/** A deployed stack: Step Functions itself. */
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

  /**
   * The summary of the execution's last Merge, resume points included: a failure cause holds at most
   * 32,768 characters, a state's output 256 KiB. Newest events first; pages until it finds it.
   */
  private async mergeSummary(executionArn: string): Promise<BackfillSummary | undefined> {
    let nextToken: string | undefined;
    do {
      const page = await this.target.clients.sfn.send(
        new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 100, nextToken }),
      );
      const exited = (page.events ?? []).find(
        (e: HistoryEvent) =>
          e.type === 'TaskStateExited' && e.stateExitedEventDetails?.name === BACKFILL_STATES.merge,
      );
      const output = exited?.stateExitedEventDetails?.output;
      if (output) return (JSON.parse(output) as { summary?: BackfillSummary }).summary;
      nextToken = page.nextToken;
    } while (nextToken);
    return undefined;
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
      const parsed = parseCause(d.cause);
      const summary = parsed.summary?.resumeInHistory ? await this.mergeSummary(arn) : parsed.summary;
      const detail = parsed.detail;
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

import type { HistoryEventInput } from './history.ts';
import type { Outcome } from './interpreter.ts';

// The emulator's side of local Step Functions (local/moto_stepfunctions.py): where executions are claimed
// and where their history and end are recorded, on moto's own execution objects.

/** A RUNNING execution handed to this executor. */
export interface ClaimedExecution {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly name: string;
  /** JSON text. */
  readonly input: string;
  /** Epoch milliseconds: when StartExecution was called. */
  readonly startDate: number;
  readonly roleArn: string;
  /** Set when another executor had claimed it and is gone: it ran, partly, and is not run again. */
  readonly interruptedOwner: string | null;
}

export interface Owner {
  readonly id: string;
  readonly pid: number;
}

/** The emulator does not serve local Step Functions (not our launcher, or an older one). */
export class ExecutionsApiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecutionsApiError';
  }
}

export class ExecutionsApi {
  constructor(private readonly endpoint: string) {}

  private async post<T>(route: string, body: unknown): Promise<T> {
    const response = await fetch(`${this.endpoint}/_inlet/stepfunctions/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok)
      throw new ExecutionsApiError(
        response.status === 404
          ? `the emulator at ${this.endpoint} does not run Step Functions executions (it is not Inlet's moto launcher)`
          : `local Step Functions ${route} failed: ${text}`,
      );
    return JSON.parse(text) as T;
  }

  /**
   * Claims the RUNNING executions of these state machines that no live executor holds; also says which of
   * `running` (this owner's) are no longer its to run (stopped, or taken over).
   */
  claim(owner: Owner, stateMachineArns: readonly string[], running: readonly string[]) {
    return this.post<{ claimed: ClaimedExecution[]; stopped: string[] }>('claim', {
      owner: owner.id,
      pid: owner.pid,
      stateMachineArns,
      running,
    });
  }

  /** Appends history events and, with `close`, ends the execution; refused when it is no longer this owner's. */
  record(owner: Owner, executionArn: string, events: readonly HistoryEventInput[], close?: Outcome) {
    return this.post<{ accepted: boolean; status: string }>('record', {
      owner: owner.id,
      executionArn,
      events,
      ...(close ? { close } : {}),
    });
  }

  release(owner: Owner) {
    return this.post<Record<string, never>>('release', { owner: owner.id });
  }

  /** The executors alive for a state machine. */
  executors(stateMachineArn: string) {
    return this.post<{ executors: Array<{ owner: string; pid: number }> }>('executors', { stateMachineArn });
  }
}

// An execution's history as GetExecutionHistory returns it on AWS: the ASL interpreter's own events
// (aws-local-stepfunctions) and the task integrations' calls, turned into Step Functions' event types and
// details. Shapes per the API reference's HistoryEvent
// (https://docs.aws.amazon.com/step-functions/latest/apireference/API_HistoryEvent.html), sequences as
// histories recorded on AWS show them (LocalStack's snapshot tests record real executions, e.g.
// tests/aws/services/stepfunctions/v2/error_handling/test_task_service_lambda.snapshot.json).

/** One history event before the emulator numbers it: `id` and `previousEventId` are assigned there. */
export interface HistoryEventInput {
  readonly type: string;
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly [details: string]: unknown;
}

/** The interpreter's events (its EventLog type, which the package does not export), as far as used here. */
export interface InterpreterEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly state?: {
    readonly name: string;
    readonly type: string;
    readonly input?: unknown;
    readonly output?: unknown;
  };
  readonly parentState?: { readonly name: string };
  readonly index?: number;
  readonly output?: unknown;
  readonly Error?: string;
  readonly Cause?: unknown;
}

/** A task state's integration, as history events name it: `lambda` / `invoke`, `aws-sdk:sfn` / `startExecution`. */
export interface TaskResource {
  readonly resourceType: string;
  readonly resource: string;
}

export type StateDefinition = {
  readonly Type: string;
  readonly Resource?: string;
  readonly Parameters?: unknown;
  readonly InputPath?: string | null;
  readonly ItemsPath?: string;
  readonly ItemProcessor?: Definition;
  readonly Iterator?: Definition;
  readonly Branches?: readonly Definition[];
};
export type Definition = { readonly StartAt: string; readonly States: Record<string, StateDefinition> };

/** Every state with its name, the Map's and Parallel's inner ones too (names are unique in a machine). */
export function allStates(definition: Definition): Array<[string, StateDefinition]> {
  return Object.entries(definition.States).flatMap(([name, state]) => {
    const inner = [state.ItemProcessor ?? state.Iterator, ...(state.Branches ?? [])].filter(
      (d): d is Definition => d !== undefined,
    );
    return [[name, state] as [string, StateDefinition], ...inner.flatMap(allStates)];
  });
}

/** `arn:aws:states:::aws-sdk:sfn:startExecution` -> `aws-sdk:sfn` / `startExecution`. */
export function taskResource(resource: string): TaskResource {
  const integration = resource.split(':::')[1] ?? resource;
  const cut = integration.lastIndexOf(':');
  return { resourceType: integration.slice(0, cut), resource: integration.slice(cut + 1) };
}

const json = (value: unknown) => JSON.stringify(value ?? null);
const text = (value: unknown) => (typeof value === 'string' ? value : json(value));

/** `$`, `$.a.b`: the simple paths a Map's InputPath and ItemsPath use; anything else is not resolved here. */
function simplePath(value: unknown, path: string | null | undefined): { found: boolean; value?: unknown } {
  if (path === undefined || path === '$') return { found: true, value };
  if (path === null || !/^\$(\.[A-Za-z_][\w-]*)+$/.test(path)) return { found: false };
  let current = value;
  for (const key of path.slice(2).split('.')) {
    if (current === null || typeof current !== 'object') return { found: false };
    current = (current as Record<string, unknown>)[key];
  }
  return { found: true, value: current };
}

/**
 * Translates one execution's events, in the order they happen, into AWS history events. Task events
 * (scheduled, started, succeeded, failed) come from the integrations' calls; the rest from the interpreter.
 */
export class HistoryRecorder {
  private readonly states: Map<string, StateDefinition>;

  constructor(
    definition: Definition,
    private readonly emit: (event: HistoryEventInput) => void,
  ) {
    this.states = new Map(allStates(definition));
  }

  private add(type: string, details?: Record<string, unknown>, timestamp = Date.now()): void {
    this.emit({ type, timestamp, ...details });
  }

  interpreter(event: InterpreterEvent): void {
    const t = event.timestamp;
    const state = event.state;
    switch (event.type) {
      case 'StateEntered': {
        if (!state) return;
        const details = { name: state.name, input: json(state.input), inputDetails: { truncated: false } };
        this.add(`${state.type}StateEntered`, { stateEnteredEventDetails: details }, t);
        if (state.type === 'Map') this.mapStarted(state.name, state.input, t);
        if (state.type === 'Parallel') this.add('ParallelStateStarted', {}, t);
        return;
      }
      case 'StateExited': {
        // A Fail state never exits: ExecutionFailed follows it.
        if (!state || state.type === 'Fail') return;
        if (state.type === 'Map') this.add('MapStateSucceeded', {}, t);
        if (state.type === 'Parallel') this.add('ParallelStateSucceeded', {}, t);
        const details = { name: state.name, output: json(state.output), outputDetails: { truncated: false } };
        this.add(`${state.type}StateExited`, { stateExitedEventDetails: details }, t);
        return;
      }
      case 'StateFailed':
        // A Task's failure is its TaskFailed (recorded by the integration); a Map's or Parallel's has its own
        // (on each failed attempt: the interpreter cannot say yet whether a Retry follows).
        if (state?.type === 'Map' || state?.type === 'Parallel') this.add(`${state.type}StateFailed`, {}, t);
        return;
      case 'StateRetried':
        // A retried Map starts over (MapStateStarted again); a retried Task's next attempt is its TaskScheduled.
        if (state?.type === 'Map') this.mapStarted(state.name, state.input, t);
        return;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const key = `${event.type[0]?.toLowerCase()}${event.type.slice(1)}EventDetails`;
        this.add(event.type, { [key]: { name: event.parentState?.name, index: event.index } }, t);
        return;
      }
      case 'ExecutionSucceeded':
        this.add(
          'ExecutionSucceeded',
          {
            executionSucceededEventDetails: {
              output: json(event.output),
              outputDetails: { truncated: false },
            },
          },
          t,
        );
        return;
      case 'ExecutionFailed':
        this.add(
          'ExecutionFailed',
          { executionFailedEventDetails: { error: event.Error, cause: text(event.Cause) } },
          t,
        );
        return;
      case 'ExecutionTimeout':
        this.add(
          'ExecutionTimedOut',
          {
            executionTimedOutEventDetails: {
              error: 'States.Timeout',
              cause: "The execution has exceeded the state machine's TimeoutSeconds",
            },
          },
          t,
        );
        return;
      // ExecutionStarted is recorded by StartExecution, ExecutionAborted by StopExecution (the emulator);
      // StateCaught is followed by the state's exit, with the catcher's output; Parallel branches have no
      // events of their own on AWS.
      default:
        return;
    }
  }

  /** MapStateStarted carries the number of items, from the Map's input (when its paths are simple ones). */
  private mapStarted(name: string, input: unknown, timestamp: number): void {
    const map = this.states.get(name);
    const afterInputPath = simplePath(input, map?.InputPath);
    const items = afterInputPath.found ? simplePath(afterInputPath.value, map?.ItemsPath) : afterInputPath;
    const length = items.found && Array.isArray(items.value) ? items.value.length : undefined;
    this.add(
      'MapStateStarted',
      { mapStateStartedEventDetails: length === undefined ? {} : { length } },
      timestamp,
    );
  }

  taskScheduled(resource: TaskResource, parameters: unknown, region: string): void {
    this.add('TaskScheduled', {
      taskScheduledEventDetails: { ...resource, region, parameters: json(parameters) },
    });
    this.add('TaskStarted', { taskStartedEventDetails: { ...resource } });
  }

  taskSucceeded(resource: TaskResource, output: unknown): void {
    this.add('TaskSucceeded', {
      taskSucceededEventDetails: { ...resource, output: json(output), outputDetails: { truncated: false } },
    });
  }

  taskFailed(resource: TaskResource, error: string, cause: string): void {
    this.add('TaskFailed', { taskFailedEventDetails: { ...resource, error, cause } });
  }
}

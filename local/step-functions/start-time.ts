import { StateMachine } from './asl-interpreter.ts';

// `$$.Execution.StartTime` is when StartExecution was called (the context object,
// https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html). The interpreter sets
// it to `new Date()` when its run begins, over the one it is given, and an execution started while local
// mode was down begins later than it started: a reconcile's window, measured from its start, would move.
// Its run computes that date synchronously, before its first await; for that synchronous part only, `new
// Date()` answers the start time given in the run's context. Nothing else runs meanwhile (one thread), and
// `Date.now()` is untouched.

/** Runs `fn` with `new Date()` (no arguments) answering `at`, for its synchronous part only. */
export function keepingStartTime<T>(at: Date, fn: () => T): T {
  const RealDate = globalThis.Date;
  const fixed = at.getTime();
  globalThis.Date = class extends RealDate {
    constructor(...args: ConstructorParameters<typeof Date> | []) {
      if (args.length === 0) super(fixed);
      else super(...(args as ConstructorParameters<typeof Date>));
    }
  } as DateConstructor;
  try {
    return fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

type Execute = (
  input: unknown,
  options: { runOptions?: { context?: { Execution?: { StartTime?: unknown } } } },
  cleanup: unknown,
) => Promise<unknown>;
const prototype = StateMachine.prototype as unknown as { execute: Execute };
const execute = prototype.execute;
// Every run, a Map's iterations too (each is a run of its own, with the execution's context).
prototype.execute = function (this: unknown, input, options, cleanup) {
  const start = options?.runOptions?.context?.Execution?.StartTime;
  const call = () => execute.call(this, input, options, cleanup);
  return typeof start === 'string' ? keepingStartTime(new Date(start), call) : call();
};

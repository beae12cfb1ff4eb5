/**
 * What Lambda's Invoke API (RequestResponse) answers: the function's result, or its error as the runtime
 * reported it (`errorType` is what Step Functions and the SQS mapping see; `Sandbox.Timedout` when Lambda
 * stopped it at its timeout, `Runtime.ExitError` when its process died).
 */
export type Invocation =
  | { readonly ok: true; readonly payload: unknown }
  | { readonly ok: false; readonly error: FunctionError };

export interface FunctionError {
  readonly errorType: string;
  readonly errorMessage: string;
  readonly trace?: readonly string[];
}

/**
 * Invokes a function of the local stack by its logical id in the template, as Lambda would run it: its
 * bundle, in its own process, under the Runtime API (local/lambda/host.ts). Local mode's event source
 * mappings, schedule and state machine tasks all go through this one door.
 * @example
 * const result = await invoker.invoke('InletFunctionsBackfill2E66CCFD', { action: 'plan', ... });
 * if (!result.ok) throw functionErrorOf(result.error);
 */
export interface LambdaInvoker {
  invoke(functionLogicalId: string, payload: unknown): Promise<Invocation>;
}

/** A function's error as a thrown Error: its name is Lambda's `errorType`, its message the error payload. */
export class LambdaFunctionError extends Error {
  constructor(readonly error: FunctionError) {
    super(JSON.stringify(error));
    this.name = error.errorType;
  }
}

/** The payload, or the function's error thrown (the caller that needs the result, e.g. a poller). */
export async function invokeOrThrow(
  invoker: LambdaInvoker,
  logicalId: string,
  payload: unknown,
): Promise<unknown> {
  const result = await invoker.invoke(logicalId, payload);
  if (!result.ok) throw new LambdaFunctionError(result.error);
  return result.payload;
}

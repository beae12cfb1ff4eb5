/**
 * Lambda's Invoke (RequestResponse), as local mode's callers use it: the event source mappings and schedules
 * of the local runner, the state machine's `lambda:invoke` tasks. A function named by its logical ID in the
 * synthesized template, a JSON payload, the function's response. Local mode has one implementation: the
 * function's bundle in its own process under the Lambda Runtime API (local/lambda/host.ts).
 * @example
 * const result = await invoker.invoke('InletFunctionsBackfill2E66CCFD', { action: 'plan', ... });
 * if (result.functionError) throw new LambdaFunctionError(result.payload as FunctionErrorDocument);
 */
export interface LambdaInvoker {
  invoke(functionLogicalId: string, payload: unknown): Promise<LambdaInvokeResult>;
}

/** What Lambda's Invoke returns for a function that ran (a function that could not run is a thrown error). */
export interface LambdaInvokeResult {
  /** The function's response; for a function error, Lambda's error document (`errorType`, `errorMessage`, `trace`). */
  readonly payload: unknown;
  /** Lambda's `X-Amz-Function-Error` header: set when the function failed (or was stopped at its timeout). */
  readonly functionError?: 'Unhandled';
}

/**
 * Lambda's error document for a failed invocation: the runtime's `{errorType, errorMessage, trace}` for an
 * error the handler threw; `Sandbox.Timedout` when Lambda stopped it at its timeout, `Runtime.ExitError` when
 * its process died. `errorType` is what Step Functions and the SQS mapping see.
 */
export interface FunctionErrorDocument {
  readonly errorType: string;
  readonly errorMessage: string;
  readonly trace?: readonly string[];
}

/** A function error as a thrown Error: its name is Lambda's `errorType`, its message the error document. */
export class LambdaFunctionError extends Error {
  constructor(readonly document: FunctionErrorDocument) {
    super(JSON.stringify(document));
    this.name = document.errorType;
  }
}

/** The error document Lambda's Node.js runtime returns for an error the handler throws. */
export function functionErrorPayload(error: unknown): {
  errorType: string;
  errorMessage: string;
  trace: string[];
} {
  const e = error instanceof Error ? error : new Error(String(error));
  return { errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') };
}

/**
 * Runs a handler as Lambda would answer Invoke: its result, or its error as a function error. Only for a
 * state machine definition run with no stack at all (local/step-functions/standalone.ts: unit tests, the
 * bench); local mode and the integration suite run the bundles.
 */
export async function invokeHandler(
  handler: (payload: never) => Promise<unknown>,
  payload: unknown,
): Promise<LambdaInvokeResult> {
  try {
    return { payload: await handler(payload as never) };
  } catch (error) {
    return { payload: functionErrorPayload(error), functionError: 'Unhandled' };
  }
}

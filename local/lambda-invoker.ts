import { GetFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import type { AwsClients } from '../shared/aws/clients.ts';
import { backfillFromEnv } from '../shared/aws/runtime.ts';
import { makeBackfillHandler } from '../shared/handlers/backfill-handler.ts';
import type { Log } from '../shared/log.ts';
import type { MetricsSink } from '../shared/metrics.ts';
import type { BackfillDeps } from '../shared/usecases/backfill.ts';
import { functionEnv, type IamAccess } from './iam/client.ts';
import { type StackResource, stackResources } from './stack-resources.ts';

/**
 * Lambda's Invoke (RequestResponse), as local mode's callers use it (the state machine's `lambda:invoke`
 * tasks): a function named by its logical ID in the synthesized template, a JSON payload, the function's
 * response. How the function runs (in this process today, from its bundle under the Lambda Runtime API
 * next) stays behind this interface.
 */
export interface LambdaInvoker {
  invoke(functionLogicalId: string, payload: unknown): Promise<LambdaInvokeResult>;
}

/** What Lambda's Invoke returns for a function that ran (a function that could not run is a thrown error). */
export interface LambdaInvokeResult {
  /** The function's response; for a function error, Lambda's error document (`errorType`, `errorMessage`, `trace`). */
  readonly payload: unknown;
  /** Lambda's `X-Amz-Function-Error` header: set when the function failed. */
  readonly functionError?: 'Unhandled';
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

/** Runs a handler as Lambda would answer Invoke: its result, or its error as a function error. */
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

export interface InProcessInvokerOptions {
  readonly clients: AwsClients;
  readonly stackName: string;
  readonly endpoint: string;
  readonly region: string;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
  /** Tests inject faults into the backfill function's dependencies. */
  readonly wrapDeps?: (deps: BackfillDeps) => BackfillDeps;
  /**
   * The IAM check: the function calls AWS through this proxy with its role's credentials. Without it, the
   * emulator directly with the fixed test key.
   */
  readonly iam?: IamAccess;
}

/**
 * A function local mode can call in this process: the logical IDs' prefix (infra/functions.ts names them)
 * and its role's owner, as the IAM check registers it.
 */
const IN_PROCESS = { backfill: { logicalIdPrefix: 'InletFunctionsBackfill', role: 'Backfill' } } as const;

/**
 * Calls the real handler in this process, built as its Lambda entrypoint builds it, from the function's
 * environment as deployed to the emulator (read on every call, as a new Lambda environment would see an
 * UpdateFunctionConfiguration; the handler is rebuilt only when it changed). The backfill function only:
 * nothing else in the stack is invoked synchronously.
 */
export class InProcessInvoker implements LambdaInvoker {
  private resources?: Promise<StackResource[]>;
  private readonly built = new Map<string, { env: string; handler: (payload: never) => Promise<unknown> }>();

  constructor(private readonly options: InProcessInvokerOptions) {}

  async invoke(functionLogicalId: string, payload: unknown): Promise<LambdaInvokeResult> {
    if (!functionLogicalId.startsWith(IN_PROCESS.backfill.logicalIdPrefix))
      throw new Error(`local mode runs no handler for function ${functionLogicalId} in process`);
    this.resources ??= stackResources(this.options.clients, this.options.stackName);
    const resource = (await this.resources).find((r) => r.logicalId === functionLogicalId);
    if (!resource) throw new Error(`stack ${this.options.stackName} has no function ${functionLogicalId}`);
    const config = await this.options.clients.lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: resource.physicalId }),
    );
    const { iam } = this.options;
    const env = functionEnv(
      {
        ...config.Environment?.Variables,
        INLET_AWS_ENDPOINT: this.options.endpoint,
        AWS_REGION: this.options.region,
      },
      iam?.endpoint ?? this.options.endpoint,
      iam?.credentials[IN_PROCESS.backfill.role],
    );
    const key = JSON.stringify(env);
    let entry = this.built.get(functionLogicalId);
    if (entry?.env !== key) {
      let deps = backfillFromEnv('inlet-backfill', env, {
        ...(this.options.log ? { log: this.options.log } : {}),
        ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      });
      if (this.options.wrapDeps) deps = this.options.wrapDeps(deps);
      entry = { env: key, handler: makeBackfillHandler(deps) as (payload: never) => Promise<unknown> };
      this.built.set(functionLogicalId, entry);
    }
    return invokeHandler(entry.handler, payload);
  }
}

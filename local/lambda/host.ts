import {
  GetFunctionConfigurationCommand,
  type GetFunctionConfigurationCommandOutput,
  type LambdaClient,
} from '@aws-sdk/client-lambda';
import { MemoryMetrics } from '../../shared/kernel/metrics.ts';
import type { LambdaInvokeResult, LambdaInvoker } from '../lambda-invoker.ts';
import type { AccessPolicy } from './access.ts';
import { recordEmf } from './emf.ts';
import { type FunctionSpec, functionEnvironment } from './environment.ts';
import { ExecutionEnvironment } from './execution-environment.ts';
import type { LambdaRuntime } from './install.ts';

/** A function of the local stack: its logical id, its deployed name and its bundle (from the template). */
export interface HostedFunction {
  readonly logicalId: string;
  readonly functionName: string;
  readonly codeDir: string;
  /** Whose role it runs as, as the IAM check registers roles: `Batcher`, `Sink`... (local/iam/policies.ts). */
  readonly role: string;
  /** The template's `Runtime` (e.g. `nodejs22.x`): an invocation fails if local mode has no Node.js for it. */
  readonly runtime?: string;
}

export interface LambdaHostOptions {
  /** The emulator's Lambda API: each function's configuration, as CloudFormation deployed it. */
  readonly lambda: LambdaClient;
  readonly functions: readonly HostedFunction[];
  readonly runtime: LambdaRuntime;
  readonly region: string;
  readonly access: AccessPolicy;
  /** Each line a function process writes (its log), with the function's logical id. */
  readonly onLog?: (logicalId: string, line: string) => void;
  /**
   * Execution environments per function at most; further concurrent invocations wait for one (Lambda would
   * start more: a local limit, for a machine of a few cores). @default 4
   */
  readonly maxEnvironmentsPerFunction?: number;
}

interface Slot {
  readonly environment: ExecutionEnvironment;
  /** The configuration it was started with: a changed one (UpdateFunctionConfiguration) needs a new one. */
  readonly revision: string;
  busy: boolean;
}

/** The fields of a function's configuration that make an execution environment (Lambda's "revision"). */
function specOf(fn: HostedFunction, c: GetFunctionConfigurationCommandOutput): FunctionSpec {
  return {
    logicalId: fn.logicalId,
    functionName: fn.functionName,
    roleArn: c.Role ?? '',
    role: fn.role,
    handler: c.Handler ?? '',
    runtime: c.Runtime ?? '',
    memorySize: c.MemorySize ?? 128,
    timeoutSeconds: c.Timeout ?? 3,
    environment: c.Environment?.Variables ?? {},
    logGroup: c.LoggingConfig?.LogGroup ?? `/aws/lambda/${fn.functionName}`,
    codeDir: fn.codeDir,
  };
}

/**
 * The functions of the local stack, run as Lambda runs them: each invocation in an execution environment of
 * its own process (the bundle under AWS's runtime interface client and Runtime Interface Emulator), started
 * from the deployed function's handler, runtime, memory, timeout and environment, read from the emulator's
 * Lambda API at each invocation, as Lambda reads the function's current version. Metrics are what the
 * functions' EMF log lines say, as CloudWatch would extract them.
 */
export class LambdaHost implements LambdaInvoker {
  readonly metrics = new MemoryMetrics();
  private readonly byId = new Map<string, HostedFunction>();
  private readonly slots = new Map<string, Slot[]>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private stopped = false;

  constructor(private readonly options: LambdaHostOptions) {
    for (const fn of options.functions) this.byId.set(fn.logicalId, fn);
  }

  async invoke(functionLogicalId: string, payload: unknown): Promise<LambdaInvokeResult> {
    const fn = this.byId.get(functionLogicalId);
    if (!fn) throw new Error(`no function ${functionLogicalId} in the local stack`);
    if (this.stopped) throw new Error('the Lambda host is stopped');
    const config = await this.options.lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: fn.functionName }),
    );
    const spec = specOf(fn, config);
    const slot = await this.acquire(spec);
    try {
      return await slot.environment.invoke(payload);
    } finally {
      slot.busy = false;
      if (!slot.environment.alive) this.remove(fn.logicalId, slot);
      this.waiting.get(fn.logicalId)?.shift()?.();
    }
  }

  private async acquire(spec: FunctionSpec): Promise<Slot> {
    const revision = JSON.stringify(spec);
    for (;;) {
      const slots = this.slots.get(spec.logicalId) ?? [];
      this.slots.set(spec.logicalId, slots);
      // Environments of an older configuration are retired as soon as they are idle.
      for (const old of slots.filter((s) => s.revision !== revision && !s.busy)) {
        this.remove(spec.logicalId, old);
        void old.environment.stop();
      }
      const idle = slots.find((s) => !s.busy && s.revision === revision && s.environment.alive);
      if (idle) {
        idle.busy = true;
        return idle;
      }
      if (slots.length < (this.options.maxEnvironmentsPerFunction ?? 4)) {
        const slot: Slot = { environment: this.environmentFor(spec), revision, busy: true };
        slots.push(slot);
        try {
          await slot.environment.start();
        } catch (error) {
          this.remove(spec.logicalId, slot);
          throw error;
        }
        return slot;
      }
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(spec.logicalId) ?? [];
        queue.push(resolve);
        this.waiting.set(spec.logicalId, queue);
      });
    }
  }

  private environmentFor(spec: FunctionSpec): ExecutionEnvironment {
    const access = this.options.access({
      logicalId: spec.logicalId,
      functionName: spec.functionName,
      roleArn: spec.roleArn,
      role: spec.role,
    });
    return new ExecutionEnvironment({
      runtime: this.options.runtime,
      codeDir: spec.codeDir,
      env: functionEnvironment(spec, access, this.options.runtime, this.options.region),
      timeoutSeconds: spec.timeoutSeconds,
      onLine: (line) => {
        recordEmf(line, this.metrics);
        this.options.onLog?.(spec.logicalId, line);
      },
    });
  }

  private remove(logicalId: string, slot: Slot): void {
    const slots = this.slots.get(logicalId) ?? [];
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
  }

  /** Stops every execution environment (waits for none: call it once the invocations are done). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.slots.values()].flat();
    this.slots.clear();
    await Promise.all(all.map((s) => s.environment.stop()));
  }
}

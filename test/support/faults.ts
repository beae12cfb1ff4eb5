import { classifyAwsError, POSSIBLY_APPLIED } from '../../shared/kernel/errors.ts';

/**
 * Crash injection around the ports: a Lambda that dies between two AWS calls. After the crash point every
 * further call of that invocation throws, so the invocation can do nothing more (no writes, no deletes),
 * exactly as if the process had been killed. The product code knows nothing of this.
 */
export interface CrashPlan {
  /** `<port>.<method>`, e.g. `ledger.sealBatch`. */
  readonly point: string;
  /** Which call of that method crashes (1-based). @default 1 */
  readonly occurrence?: number;
  /**
   * Crash right after the call took effect, or right before it was sent. `applied-then-refused`: no crash;
   * the call takes effect, then reports what the SDK reports when attempt 1 was applied (answer lost, 500)
   * and every retry was throttled, through the adapters' own `classifyAwsError`; every later call of the
   * same method in the invocation is throttled on all its attempts (sustained throttling, so re-issuing
   * cannot settle it). @default 'after'
   */
  readonly when?: 'after' | 'before' | 'applied-then-refused';
}

/**
 * The error an adapter raises for a call whose retries were all throttled; `firstApplied`: its first attempt
 * was applied and answered 500, as the attempt-tracking middleware (shared/kernel/aws/attempts.ts) marks it.
 */
export function throttledAfterRetries(
  point: string,
  firstApplied: boolean,
  classify: (operation: string, error: unknown) => Error = classifyAwsError,
): Error {
  const last = Object.assign(new Error('The level of configured provisioned throughput was exceeded.'), {
    name: 'ProvisionedThroughputExceededException',
    $metadata: { httpStatusCode: 400, attempts: 4 },
    [POSSIBLY_APPLIED]: firstApplied,
  });
  return classify(point, last);
}

export class SimulatedCrash extends Error {
  constructor(point: string) {
    super(`simulated crash at ${point}`);
    this.name = 'SimulatedCrash';
  }
}

export class FaultInjector {
  private readonly counts = new Map<string, number>();
  readonly calls: string[] = [];
  dead = false;
  fired = false;
  /** After an `applied-then-refused` hit: the method whose every later call is throttled. */
  private throttling?: string;

  /**
   * `classify`: the SDK-error classifier the adapters use; a broken variant's (test/sim/variants.ts) so the
   * matrix can show that it catches it. @default classifyAwsError
   */
  constructor(
    private readonly plan?: CrashPlan,
    private readonly classify?: (operation: string, error: unknown) => Error,
  ) {}

  wrap<T extends object>(portName: string, port: T): T {
    return new Proxy(port, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        const point = `${portName}.${String(property)}`;
        return async (...args: unknown[]) => {
          if (this.dead) throw new SimulatedCrash(`${point} (process already dead)`);
          if (this.throttling === point) throw throttledAfterRetries(point, false, this.classify);
          const n = (this.counts.get(point) ?? 0) + 1;
          this.counts.set(point, n);
          this.calls.push(point);
          const hit = this.plan?.point === point && (this.plan.occurrence ?? 1) === n;
          if (hit && this.plan?.when === 'before') {
            this.dead = this.fired = true;
            throw new SimulatedCrash(point);
          }
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (hit && this.plan?.when === 'applied-then-refused') {
            this.fired = true;
            this.throttling = point;
            throw throttledAfterRetries(point, true, this.classify);
          }
          if (hit) {
            this.dead = this.fired = true;
            throw new SimulatedCrash(point);
          }
          return result;
        };
      },
    });
  }
}

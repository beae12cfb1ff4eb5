/**
 * The SDK's view of AWS: a port call is up to N attempts (the client's standard retry mode), each of
 * which may be applied and answered, applied with the answer lost, refused with a 5xx, or throttled; only
 * the last attempt's error reaches the adapter. That is how a write can happen behind a 400.
 */
import { attemptMayHaveApplied, POSSIBLY_APPLIED } from '../../shared/kernel/errors.ts';
import { never, type Rng, type Scheduler, type Worker } from './scheduler.ts';

export type Service = 'dynamodb' | 's3' | 'sqs' | 'events';

/**
 * Default attempts per client: @aws-sdk/client-dynamodb's runtimeConfig defaults maxAttempts to 4, the
 * others to @smithy/util-retry's DEFAULT_MAX_ATTEMPTS = 3 (node_modules, SDK 3.1169).
 */
export const MAX_ATTEMPTS: Record<Service, number> = { dynamodb: 4, s3: 3, sqs: 3, events: 3 };

/** An error as the SDK v3 throws it: name, status in `$metadata`, attempts made. */
export interface SdkError extends Error {
  $fault: 'client' | 'server';
  $metadata: { httpStatusCode?: number; attempts: number; totalRetryDelay: number };
  /** Set by the attempt-tracking middleware when some attempt may have been applied (see mayBeApplied). */
  [key: string]: unknown;
}

export function sdkError(name: string, status: number | undefined, extra: object = {}): SdkError {
  const error = Object.assign(new Error(`${name} (simulated)`), extra) as SdkError;
  error.name = name;
  error.$fault = status !== undefined && status < 500 ? 'client' : 'server';
  error.$metadata = { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 };
  return error;
}

const THROTTLE: Record<Service, [string, number]> = {
  dynamodb: ['ProvisionedThroughputExceededException', 400],
  s3: ['SlowDown', 503],
  sqs: ['ThrottlingException', 400],
  events: ['ThrottlingException', 400],
};

// @smithy/core retry/service-error-classification: what the standard retry strategy retries. Not
// ConditionalCheckFailed, TransactionCanceled or TransactionConflict: those reach the adapter at once.
const RETRIED_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'SlowDown',
  'RequestLimitExceeded',
  'TransactionInProgressException',
  'TimeoutError',
  'InternalServerError',
  'ServiceUnavailable',
]);
const retried = (e: SdkError) =>
  RETRIED_NAMES.has(e.name) || [500, 502, 503, 504].includes(e.$metadata.httpStatusCode ?? 0);

/**
 * What shared/kernel/aws/attempts.ts (the attempt-tracking middleware) does to the error a call finally throws:
 * POSSIBLY_APPLIED = whether any attempt's own error left room for an applied write, judged by main's
 * attemptMayHaveApplied. The simulation sets it exactly so, so main's classifyAwsError runs as on AWS.
 */
export const markAttempts = (error: SdkError, possiblyApplied: boolean): void => {
  error[POSSIBLY_APPLIED] = possiblyApplied;
};

export interface FaultRates {
  /** Attempt applied, answer lost (500 or client timeout). */
  appliedLost: number;
  /** Attempt refused with a 500 before doing anything. */
  refused5xx: number;
  throttled: number;
  /** Milliseconds per attempt: usually small, sometimes very slow (a slow partition, a GC pause). */
  slow: number;
  /**
   * Throttling comes in bursts (a hot partition, an exhausted retry quota): after a failed attempt the
   * next one is throttled with this probability. It makes "applied, then throttled until the SDK gives up"
   * a common path instead of a one-in-a-million one.
   */
  burst: number;
  /**
   * Fraction of simulated time a service spends in a throttling storm (a hot partition, a new on-demand
   * table scaling up): minutes on AWS, seconds here. While it lasts most attempts are throttled and some
   * are applied but time out, so even the use cases' own retries run out.
   */
  storms: number;
}

export const NO_FAULTS: FaultRates = {
  appliedLost: 0,
  refused5xx: 0,
  throttled: 0,
  slow: 0,
  burst: 0,
  storms: 0,
};

const STORM_MS = 8_000;
const PARTITIONS = 4;

type Kind = 'ok' | 'lost' | 'refused' | 'throttled';

export class Aws {
  rates: FaultRates;
  /** Ops where a fault may strike; a variant or a test can narrow it. */
  readonly calls = new Map<string, number>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly rng: Rng,
    rates: FaultRates,
  ) {
    this.rates = rates;
  }

  /** Storm windows per service, drawn lazily per STORM_MS slot so one seed always has the same ones. */
  private readonly stormSlots = new Map<string, number | undefined>();

  /**
   * Whether this call lands on a throttled partition now. DynamoDB throttles per partition: a storm hits one
   * of PARTITIONS hash ranges of the keys (the op label names the key), the others go on; other services
   * throttle as a whole.
   */
  private storming(service: Service, op: string): boolean {
    const slot = `${service}#${Math.floor(this.scheduler.now / STORM_MS)}`;
    if (!this.stormSlots.has(slot))
      this.stormSlots.set(
        slot,
        this.rng.chance(this.rates.storms) ? this.rng.int(0, PARTITIONS - 1) : undefined,
      );
    const hot = this.stormSlots.get(slot);
    if (hot === undefined) return false;
    if (service !== 'dynamodb') return true;
    let hash = 0;
    for (let i = 0; i < op.length; i++) hash = (hash * 31 + op.charCodeAt(i)) >>> 0;
    return hash % PARTITIONS === hot;
  }

  private kind(service: Service, op: string, afterFailure: boolean): Kind {
    if (this.rates.storms > 0 && this.storming(service, op)) {
      // Overload: refused, except a few requests that get through and time out on the way back.
      return this.rng.chance(0.85) ? 'throttled' : 'lost';
    }
    if (afterFailure && this.rng.chance(this.rates.burst)) return 'throttled';
    const r = this.rng.next();
    const { appliedLost, refused5xx, throttled } = this.rates;
    if (r < appliedLost) return 'lost';
    if (r < appliedLost + refused5xx) return 'refused';
    if (r < appliedLost + refused5xx + throttled) return 'throttled';
    return 'ok';
  }

  /** Simulated time runs 10x fast for Lambda timeouts (see world.ts), so slow calls are scaled alike. */
  private latency(): number {
    return this.rng.chance(this.rates.slow) ? this.rng.int(100, 2_000) : this.rng.int(2, 40);
  }

  /**
   * One SDK call. `apply` is the service acting on one attempt: it returns the response or throws the
   * service's error; it runs when the attempt reaches the service, interleaved with every other worker.
   */
  async send<T>(worker: Worker, service: Service, op: string, apply: () => T): Promise<T> {
    this.calls.set(op, (this.calls.get(op) ?? 0) + 1);
    const max = MAX_ATTEMPTS[service];
    let possiblyApplied = false;
    let delay = 0;
    for (let attempt = 1; ; attempt++) {
      // The request travels on its own: it reaches the service even if its worker dies meanwhile.
      await this.scheduler.sleep(undefined, this.latency(), worker);
      const kind = this.kind(service, op, attempt > 1);
      let error: SdkError;
      if (kind === 'throttled') {
        const [name, status] = THROTTLE[service];
        error = sdkError(name, status);
      } else if (kind === 'refused') {
        error = sdkError('InternalServerError', 500);
      } else {
        let result: T | undefined;
        let thrown: SdkError | undefined;
        try {
          result = apply();
        } catch (e) {
          thrown = e as SdkError;
        }
        if (kind === 'ok' && thrown === undefined) {
          this.scheduler.log(`${worker.name} ${op} ok#${attempt}`);
          if (this.scheduler.halted(worker)) return never;
          return result as T;
        }
        // A lost answer hides the service's verdict, applied or refused alike.
        error =
          kind === 'lost'
            ? this.rng.chance(0.5)
              ? sdkError('TimeoutError', undefined)
              : sdkError('InternalServerError', 500)
            : (thrown as SdkError);
      }
      // The middleware cannot know the truth, only what each attempt's error allows.
      possiblyApplied ||= attemptMayHaveApplied(error);
      this.scheduler.log(
        `${worker.name} ${op} #${attempt} ${kind === 'lost' ? 'APPLIED+' : ''}${error.name}`,
      );
      if (this.scheduler.halted(worker)) return never;
      if (!retried(error) || attempt >= max) {
        error.$metadata = { ...error.$metadata, attempts: attempt, totalRetryDelay: delay };
        markAttempts(error, possiblyApplied);
        throw error;
      }
      // Standard mode: full-jitter exponential backoff, base 100 ms (20 s cap never reached in 4 tries).
      const backoff = Math.floor(this.rng.next() * 100 * 2 ** (attempt - 1));
      delay += backoff;
      await this.scheduler.sleep(worker, backoff);
    }
  }
}

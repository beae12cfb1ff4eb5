/**
 * Every error Inlet raises. Each says whether retrying can help, so handlers decide between failing a
 * record (SQS retries it) and quarantining it (retrying cannot help).
 */
export class InletError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'InletError';
    this.retryable = options.retryable;
  }
}

/** Input that can never be processed: the message is quarantined with this reason. */
export class MalformedEventError extends InletError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: false, cause });
    this.name = 'MalformedEventError';
  }
}

/** Configuration that cannot work; raised at start-up or synth, listing every problem. */
export class ConfigError extends InletError {
  constructor(readonly problems: readonly string[]) {
    super(`invalid Inlet configuration:\n- ${problems.join('\n- ')}`, { retryable: false });
    this.name = 'ConfigError';
  }
}

/**
 * AWS refused the request and no attempt of it can have been applied (every SDK attempt was answered with a
 * refusal): a retry is safe and the protocol may act as if it never happened.
 */
export class DefiniteFailureError extends InletError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: true, cause });
    this.name = 'DefiniteFailureError';
  }
}

/**
 * A refusal for load (throttling, `SlowDown`, exhausted retry quota): definitely not applied, and worth
 * retrying soon with backoff rather than failing the work for a whole visibility timeout.
 */
export class ThrottledError extends DefiniteFailureError {
  constructor(message: string, cause?: unknown) {
    super(message, cause);
    this.name = 'ThrottledError';
  }
}

/**
 * The request may or may not have been applied (timeout, connection reset, 5xx). The protocol treats the
 * write as possibly done: a batch with such a claim is never sealed (docs/protocol.md, "Unknown outcomes, resolved").
 */
export class UnknownOutcomeError extends InletError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: true, cause });
    this.name = 'UnknownOutcomeError';
  }
}

/** A manifest version already exists with other content: a fork. Never retried; alarms. */
export class ManifestConflictError extends InletError {
  constructor(
    readonly table: string,
    readonly version: number,
    readonly expectedBatchId: string,
    readonly foundBatchIds: readonly string[],
  ) {
    super(
      `manifest ${table} v${version} belongs to batch ${foundBatchIds.join(',')} not ${expectedBatchId}: refusing to fork`,
      { retryable: false },
    );
    this.name = 'ManifestConflictError';
  }
}

/**
 * A ledger item read back is not what Inlet writes (a hand edit, a restore from another version of Inlet):
 * it names the item and every problem. Retryable, although the item will not change by itself: the message
 * that led to it is not at fault, so it is not quarantined; it goes to its queue's DLQ after the queue's
 * receives, and a redrive after the item is fixed replays it.
 */
export class InvalidLedgerItemError extends InletError {
  constructor(
    readonly what: string,
    readonly key: string,
    readonly problems: readonly string[],
  ) {
    super(`ledger ${what} item ${key} is not valid: ${problems.join('; ')}`, { retryable: true });
    this.name = 'InvalidLedgerItemError';
  }
}

/** A commit request for a batch that was never sealed (or is unknown). */
export class BatchNotSealedError extends InletError {
  constructor(
    readonly table: string,
    readonly batchId: string,
    readonly state: string,
  ) {
    super(`batch ${table}/${batchId} is ${state}, not SEALED: nothing to commit`, { retryable: false });
    this.name = 'BatchNotSealedError';
  }
}

/**
 * A SEALED batch's staged list is gone. The list is deleted only after its batch is COMMITTED, so this is
 * an invariant break (a manual delete, a lifecycle rule on `_staging/`), not an unknown outcome: retrying
 * cannot bring it back, and the batch's files are acknowledged, so an operator must look.
 */
export class StagedListMissingError extends InletError {
  constructor(readonly key: string) {
    super(`staged list ${key} is missing`, { retryable: false });
    this.name = 'StagedListMissingError';
  }
}

/**
 * The manifest bucket already holds the version the ledger would reserve next, written by someone else:
 * the ledger was re-created or restored to an earlier point, or two stacks share a manifest prefix.
 * Committing would fork the table, so the committer refuses until an operator fixes the setup.
 */
export class ManifestAheadOfLedgerError extends InletError {
  constructor(
    readonly table: string,
    readonly head: number,
    readonly foundBatchIds: readonly string[],
  ) {
    super(
      `manifest bucket already has versions of table ${table} beyond the ledger's head (head ${head}, ` +
        `manifest v${head + 1} holds batch ${foundBatchIds.join(',') || '?'}); restore the ledger, or use a ` +
        'new table name / manifest prefix',
      { retryable: false },
    );
    this.name = 'ManifestAheadOfLedgerError';
  }
}

/**
 * `ChangeMessageVisibilityBatch` answered, but refused some of its entries: those messages keep the
 * visibility they had. Retryable: only a later call can tell whether the message is still held.
 */
export class VisibilityRefusedError extends InletError {
  constructor(readonly refused: readonly { readonly receiptHandle: string; readonly code: string }[]) {
    super(
      `SQS did not change the visibility of ${refused.length} message(s): ${[
        ...new Set(refused.map((r) => r.code)),
      ].join(', ')}`,
      { retryable: true },
    );
    this.name = 'VisibilityRefusedError';
  }
}

/**
 * Set on an SDK error by the attempt-tracking middleware (shared/kernel/aws/attempts.ts): `true` when ANY attempt
 * of the call may have been applied. The SDK retries a call (3 attempts by default) and reports only the
 * last error, so a throttle on attempt 3 can hide a write that attempt 1 applied before its response was
 * lost (a 500 or a timeout). That is how a claim could be "refused" and yet name its batch.
 */
export const POSSIBLY_APPLIED = '$inletPossiblyApplied';

/** Refusals for load; the SDK's own throttling list plus S3's `SlowDown` (a 503 that applies nothing). */
const THROTTLING_NAMES = new Set([
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
]);

/** 4xx answers that do not prove the request was not applied (the server may still be working on it). */
const UNCERTAIN_4XX = new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'TransactionInProgressException',
]);

type SdkErrorShape = {
  name?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
  [POSSIBLY_APPLIED]?: boolean;
};

const statusOf = (error: unknown) => (error as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;

/** A refusal for load, judged on one error (the last attempt's, or a cause in a chain). */
export function isThrottle(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ThrottledError) return true;
    if (THROTTLING_NAMES.has((e as SdkErrorShape).name ?? '') || statusOf(e) === 429) return true;
  }
  return false;
}

/**
 * Whether ONE attempt may have been applied, judged on its error: only an answer from the service that
 * refuses the request (a 4xx, or a throttle) proves it was not. Timeouts, resets, 5xx and unreadable
 * answers may hide an applied write.
 */
export function attemptMayHaveApplied(error: unknown): boolean {
  if (isThrottle(error)) return false;
  const status = statusOf(error);
  const name = (error as SdkErrorShape | undefined)?.name ?? '';
  return !(status !== undefined && status >= 400 && status < 500 && !UNCERTAIN_4XX.has(name));
}

/**
 * Whether any attempt of a call may have been applied. With the tracking middleware installed the error says
 * so itself; without it, only a call made exactly once can be judged on its last error.
 */
export function mayHaveBeenApplied(error: unknown): boolean {
  const marked = (error as SdkErrorShape | undefined)?.[POSSIBLY_APPLIED];
  if (typeof marked === 'boolean') return marked;
  const attempts = (error as SdkErrorShape | undefined)?.$metadata?.attempts ?? 1;
  return attempts > 1 || attemptMayHaveApplied(error);
}

/**
 * Maps an SDK error that the adapter did not handle itself to a domain error. "Definitely not applied" only
 * when no attempt could have been applied (docs/aws-behaviour.md, "The SDK retries a call ...");
 * everything else has an unknown outcome and the protocol must resolve it (re-issue the conditional write,
 * or read the item) before acting as if it failed.
 */
export function classifyAwsError(operation: string, error: unknown): InletError {
  if (error instanceof InletError) return error;
  const name = (error as SdkErrorShape | undefined)?.name ?? 'Error';
  const message = `${operation} failed: ${name}: ${(error as Error | undefined)?.message ?? String(error)}`;
  if (mayHaveBeenApplied(error)) return new UnknownOutcomeError(message, error);
  if (isThrottle(error)) return new ThrottledError(message, error);
  return new DefiniteFailureError(message, error);
}

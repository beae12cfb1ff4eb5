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

/** AWS refused the request (throttling, limits): it did not happen, so a retry is safe. */
export class DefiniteFailureError extends InletError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: true, cause });
    this.name = 'DefiniteFailureError';
  }
}

/**
 * The request may or may not have been applied (timeout, connection reset, 5xx). The protocol treats the
 * write as possibly done: a batch with such a claim is never sealed (docs/protocol.md, "unknown outcomes").
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

const DEFINITE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'TooManyRequestsException',
  'AccessDeniedException',
  'AccessDenied',
  'ValidationException',
  'ResourceNotFoundException',
  'NoSuchBucket',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
]);

/**
 * Maps an SDK error that the adapter did not handle itself to a domain error: refused requests are
 * definite failures, everything else (timeouts, 5xx, network) has an unknown outcome.
 */
export function classifyAwsError(operation: string, error: unknown): InletError {
  if (error instanceof InletError) return error;
  const name = (error as { name?: string } | undefined)?.name ?? 'Error';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata
    ?.httpStatusCode;
  const message = `${operation} failed: ${name}: ${(error as Error | undefined)?.message ?? String(error)}`;
  if (DEFINITE_NAMES.has(name) || (status !== undefined && status >= 400 && status < 500)) {
    return new DefiniteFailureError(message, error);
  }
  return new UnknownOutcomeError(message, error);
}

import { describe, expect, it } from 'vitest';
import {
  attemptMayHaveApplied,
  classifyAwsError,
  DefiniteFailureError,
  POSSIBLY_APPLIED,
  ThrottledError,
  UnknownOutcomeError,
} from '../../../shared/kernel/errors.ts';

const sdkError = (name: string, status: number | undefined, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status, attempts: 1 }, ...extra });

describe('classifyAwsError: definitely not applied only when no attempt can have been', () => {
  it('a single refused attempt is definite; a throttle is its own kind', () => {
    expect(classifyAwsError('op', sdkError('ValidationException', 400))).toBeInstanceOf(DefiniteFailureError);
    const throttled = classifyAwsError('op', sdkError('ProvisionedThroughputExceededException', 400));
    expect(throttled).toBeInstanceOf(ThrottledError);
    // S3 answers SlowDown with a 503: a refusal for load, not a server fault.
    expect(classifyAwsError('op', sdkError('SlowDown', 503))).toBeInstanceOf(ThrottledError);
  });

  it('timeouts, resets and 5xx may have been applied', () => {
    expect(classifyAwsError('op', sdkError('InternalServerError', 500))).toBeInstanceOf(UnknownOutcomeError);
    expect(
      classifyAwsError('op', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
    ).toBeInstanceOf(UnknownOutcomeError);
    expect(classifyAwsError('op', sdkError('RequestTimeout', 400))).toBeInstanceOf(UnknownOutcomeError);
  });

  it('a throttle on the last of several attempts hides what the first did (the data-loss path)', () => {
    // Without the tracking middleware: more than one attempt, so an earlier one may have been applied.
    const retried = sdkError('ProvisionedThroughputExceededException', 400);
    retried.$metadata.attempts = 4;
    expect(classifyAwsError('claim file', retried)).toBeInstanceOf(UnknownOutcomeError);
    // With it: the mark decides, either way.
    expect(classifyAwsError('op', { ...retried, [POSSIBLY_APPLIED]: true })).toBeInstanceOf(
      UnknownOutcomeError,
    );
    expect(classifyAwsError('op', Object.assign(retried, { [POSSIBLY_APPLIED]: false }))).toBeInstanceOf(
      ThrottledError,
    );
  });

  it('judges one attempt by whether the service answered with a refusal', () => {
    expect(attemptMayHaveApplied(sdkError('ThrottlingException', 400))).toBe(false);
    expect(attemptMayHaveApplied(sdkError('ConditionalCheckFailedException', 400))).toBe(false);
    expect(attemptMayHaveApplied(sdkError('ServiceUnavailable', 503))).toBe(true);
    expect(attemptMayHaveApplied(new Error('TimeoutError'))).toBe(true);
  });
});

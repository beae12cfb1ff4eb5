import { describe, expect, it } from 'vitest';
import { conditionalReplace } from '../../../shared/kernel/put-if-absent.ts';

/** An SDK error as the S3 client throws it: the HTTP status in `$metadata`. */
const answer = (httpStatusCode: number) =>
  Object.assign(new Error(`S3 ${httpStatusCode}`), { $metadata: { httpStatusCode } });
const failWith = (code: number) => () => Promise.reject(answer(code));
const classify = (error: unknown) => new Error(`classified: ${(error as Error).message}`);

describe('conditionalReplace: S3 answers to a write conditional on what was read', () => {
  it('written when the put succeeds', async () => {
    expect(await conditionalReplace(() => Promise.resolve(), '"e1"', classify)).toBe('written');
  });

  it('a conflict on 412 and 409, with or without an ETag read, and on 404 for If-Match (the object is gone)', async () => {
    for (const expected of ['"e1"', undefined])
      for (const code of [412, 409])
        expect(await conditionalReplace(failWith(code), expected, classify)).toBe('conflict');
    expect(await conditionalReplace(failWith(404), '"e1"', classify)).toBe('conflict');
  });

  it('any other answer, and a 404 to If-None-Match, goes through the classification', async () => {
    await expect(conditionalReplace(failWith(404), undefined, classify)).rejects.toThrow(
      'classified: S3 404',
    );
    await expect(conditionalReplace(failWith(503), '"e1"', classify)).rejects.toThrow('classified: S3 503');
  });
});

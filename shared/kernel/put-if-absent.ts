/**
 * S3's answers to a create conditional on the key being absent (`If-None-Match: *`), mapped in this one place
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html and the `If-None-Match`
 * parameter of https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html):
 * - `created`: the object is ours.
 * - `exists`: 412 Precondition Failed, an object with that key exists.
 * - `conflict`: 409 ConditionalRequestConflict, a concurrent conditional write to the key was in flight, and S3
 *   says to retry. It says nothing about whether the key exists yet, so it is never read as `exists`.
 */
export type PutIfAbsentResult = 'created' | 'exists' | 'conflict';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

/**
 * Runs a conditional put and maps its answer; any other error goes through `classify` (as every S3 call's
 * does, so an outcome the SDK could not tell stays unknown). The S3 adapter and the simulation's fake share it.
 */
export async function conditionalCreate(
  put: () => Promise<unknown>,
  classify: (error: unknown) => Error,
): Promise<PutIfAbsentResult> {
  try {
    await put();
    return 'created';
  } catch (error) {
    if (status(error) === 412) return 'exists';
    if (status(error) === 409) return 'conflict';
    throw classify(error);
  }
}

/**
 * S3's answers to a replacement conditional on what was read: `If-Match` on the ETag read, or `If-None-Match: *`
 * when nothing was (`expected` undefined). `conflict` is any answer that says the key is not as read: 412 (the
 * object changed, or one appeared), 404 (for `If-Match`: it is gone) and 409 (another conditional write to
 * the key was in flight: "fetch the object's ETag and retry"). The S3 adapter of the symlink manifests and
 * the simulation's fake share it.
 */
export async function conditionalReplace(
  put: () => Promise<unknown>,
  expected: string | undefined,
  classify: (error: unknown) => Error,
): Promise<'written' | 'conflict'> {
  try {
    await put();
    return 'written';
  } catch (error) {
    const code = status(error);
    if (code === 412 || code === 409 || (expected !== undefined && code === 404)) return 'conflict';
    throw classify(error);
  }
}

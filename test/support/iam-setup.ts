/**
 * Every integration test fails when a function made a request AWS would deny (the IAM check proxy's
 * denials during the test, fixtures that cut a grant on purpose left out), naming action, resource, role.
 */
import { afterEach, beforeEach } from 'vitest';
import { describeDenials } from '../../local/iam/client.ts';
import { iamCheck } from './iam.ts';

let before = 0;

beforeEach(async () => {
  before = (await iamCheck()?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0;
});

// A test marked `it.fails` asserts the denials itself (a known finding, until the fix lands).
afterEach(async ({ task }) => {
  if (task.fails) return;
  const found = await iamCheck()?.denials(before);
  if (found && found.denials.length > 0)
    throw new Error(`AWS would deny these requests (IAM check):\n${describeDenials(found.denials)}`);
});

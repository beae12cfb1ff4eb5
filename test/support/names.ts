import { randomBytes } from 'node:crypto';

/** A name no other test (or concurrent run on the same emulator) uses; lowercase for S3. No vitest: the bench uses it. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

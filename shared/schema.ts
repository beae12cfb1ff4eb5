// Every schema in product code is written with zod/mini: its functions are tree-shaken, so a Lambda bundle
// carries ~20 KB of zod instead of the classic API's 444 KB, about 40 ms less CPU on each cold start
// (docs/performance.md). The English messages are loaded once here, so a ConfigError lists readable problems.
import { en } from 'zod/locales';
import * as z from 'zod/mini';

z.config(en());

export { z };

/** The issues of a failed parse as `path: message` lines, the way every ConfigError lists them. */
export function issueLines(error: {
  readonly issues: ReadonlyArray<{ readonly path: readonly PropertyKey[]; readonly message: string }>;
}): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
}

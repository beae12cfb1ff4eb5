// Every schema in product code is written with zod/mini, imported as `import * as z from '../kernel/zod.ts'`:
// its functions are tree-shaken, so a Lambda bundle carries a few tens of KB of zod instead of the whole
// classic API, and cold starts load less (docs/performance.md). Two things keep the shaking working: the
// namespace is re-exported with `export *` (exporting the namespace object would keep all of it), and only
// the English locale is imported (zod/locales' index holds every language). It is loaded here, once, so a
// ConfigError lists readable problems.
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';

/** The issues of a failed parse as `path: message` lines, the way every ConfigError lists them. */
export function issueLines(error: {
  readonly issues: ReadonlyArray<{ readonly path: readonly PropertyKey[]; readonly message: string }>;
}): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
}

/**
 * The integration files that run the functions' bundles (local mode, the runner, the Step Functions executor):
 * they need the Lambda runtime, so the integration project runs them after the others (vitest.config.ts) while
 * `npm test` builds it, and each waits for it (./lambda-runtime.ts). `test/unit/test-order.test.ts` keeps this
 * list and those files in step.
 */
export const RUNS_BUNDLES: readonly string[] = [
  'test/integration/backfill.test.ts',
  'test/integration/lambda-runtime.test.ts',
  'test/integration/cli-output.test.ts',
  'test/integration/local-mode.test.ts',
  'test/integration/aws-cli.test.ts',
];

import { defineConfig } from 'vitest/config';

// `npm run test:engines` only (a plain `vitest run` uses the root config and never picks this up): the
// reference engines read the tables the sink writes. One file, one emulator, one Spark JVM.
export default defineConfig({
  test: {
    name: 'engines',
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    include: ['test/engines/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    fileParallelism: false,
    // A shape's tests read through a JVM that may still be starting; a read of a table is seconds.
    testTimeout: 600_000,
    hookTimeout: 900_000,
  },
});

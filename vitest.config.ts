import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { RUNS_BUNDLES } from './test/support/runs-bundles.ts';

// Every test worker builds SDK clients; on Node < 22 each would print the SDK's eight-line
// NodeVersionSupportWarning into the report. The CLI tests that check the CLI's own handling unset it.
const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

/**
 * vitest's order (unknown and larger files first, then failed, then longer), except that the integration
 * files that run the functions' bundles come last: `npm test` is still building the Lambda runtime they run
 * under while the others run (test/run.ts).
 */
class BundlesLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const runsBundles = (spec: TestSpecification) =>
      RUNS_BUNDLES.some((file) => spec.moduleId.endsWith(file));
    return [...sorted.filter((spec) => !runsBundles(spec)), ...sorted.filter(runsBundles)];
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: BundlesLast },
    projects: [
      {
        test: {
          name: 'unit',
          env,
          include: ['test/unit/**/*.test.ts', 'test/infra/**/*.test.ts', 'test/contract/fakes.test.ts'],
          testTimeout: 60_000,
          // One module graph for the whole project instead of one per file: every file imported the SDK,
          // zod and most files aws-cdk-lib again. Measured: 180 s -> 85 s of CPU for this project, which
          // `npm test` runs beside the integration project on the same cores. The files keep no state
          // between them (no module mocks; the simulation restores the clock it takes over).
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          env,
          include: ['test/integration/**/*.test.ts', 'test/contract/adapters.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          // A request a function makes that AWS would deny fails the test (test/support/iam-setup.ts).
          setupFiles: ['test/support/iam-setup.ts'],
          // One file at a time: they share one emulator, whose Python process is the bottleneck; files run
          // side by side only contend for it (measured: the 20,000-file backfill 342 s alone, 672 s with two
          // others), and a many-core CI machine would otherwise start several.
          fileParallelism: false,
          // And in one module graph, as the unit project: measured 214 s -> 179 s for this project (166 s ->
          // 130 s of CPU). Each file makes its own clients and resources under unique names.
          isolate: false,
          // A plain `vitest run` of both projects runs this one after the unit project (vitest requires
          // a group of its own for a project with other maxWorkers); `npm test` runs the two side by side.
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

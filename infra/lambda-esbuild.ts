// The esbuild settings of every Inlet function's bundle, free of CDK so that the bench (bench/bundles.ts)
// builds and times exactly the bundle a deployment ships; infra/functions.ts passes them to NodejsFunction.

/** Output: ESM for nodejs22.x, minified; `require` for the CommonJS packages bundled into an ES module. */
export const LAMBDA_ESBUILD = {
  format: 'esm',
  target: 'node22',
  minify: true,
  mainFields: ['module', 'main'],
  banner:
    "import { createRequire as __inletRequire } from 'module'; const require = __inletRequire(import.meta.url);",
} as const;

/**
 * Packages replaced in the bundles only, by a module of ours (its path from the project root): code the SDK
 * bundles that never runs in Lambda, and that every cold start would parse. The credential chain keeps what
 * Lambda uses, the environment's credentials (shared/kernel/aws/lambda-credentials.ts says why); source runs
 * (tests, local tools) keep the SDK's whole chain.
 */
export const LAMBDA_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './shared/kernel/aws/lambda-credentials.ts',
};

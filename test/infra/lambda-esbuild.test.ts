import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLING } from '../../infra/functions.ts';
import { LAMBDA_ALIASES, LAMBDA_ESBUILD } from '../../infra/lambda-esbuild.ts';
import { projectRoot } from '../../shared/kernel/project-root.ts';

// What NodejsFunction runs (`esbuild --bundle <entry> ... --alias:<package>=<path>`, from the project root),
// through esbuild's API: the modules each function's bundle is made of.
async function bundledModules(fn: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(projectRoot, 'functions', `${fn}.ts`)],
    bundle: true,
    write: false,
    outfile: 'index.mjs',
    platform: 'node',
    format: LAMBDA_ESBUILD.format,
    target: LAMBDA_ESBUILD.target,
    minify: LAMBDA_ESBUILD.minify,
    mainFields: [...LAMBDA_ESBUILD.mainFields],
    absWorkingDir: projectRoot,
    alias: { ...LAMBDA_ALIASES },
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  return Object.entries(output?.inputs ?? {})
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
}

describe('the Lambda bundles', () => {
  it('pass the aliases to the CDK’s esbuild', () => {
    expect(LAMBDA_BUNDLING.esbuildArgs['--alias']).toEqual([
      '@aws-sdk/credential-provider-node=./shared/kernel/aws/lambda-credentials.ts',
    ]);
  });

  it.each(['sweeper', 'committer'])(
    'carry the environment’s credential provider and none of the chain Lambda never reaches (%s)',
    async (fn) => {
      const modules = await bundledModules(fn);

      expect(modules).toContain('shared/kernel/aws/lambda-credentials.ts');
      expect(modules.filter((path) => path.includes('credential-provider-env/'))).not.toEqual([]);
      for (const unused of [
        'credential-provider-node/',
        'credential-provider-ini/',
        'credential-provider-sso/',
        'credential-provider-process/',
        'credential-provider-web-identity/',
        'credential-provider-login/',
        'credential-provider-imds/',
        'token-providers/',
        'nested-clients/',
      ])
        expect(modules.filter((path) => path.includes(unused))).toEqual([]);
    },
  );
});

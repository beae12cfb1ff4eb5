import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLING } from '../../infra/functions.ts';
import { LAMBDA_ALIASES, LAMBDA_ESBUILD } from '../../infra/lambda-esbuild.ts';
import { projectRoot } from '../../shared/kernel/project-root.ts';

// What NodejsFunction runs (`esbuild --bundle <entry> ... --alias:<package>=<path>`, from the project root),
// through esbuild's API: the modules each function's bundle is made of, built once per function.
const built = new Map<string, Promise<string[]>>();
function bundledModules(fn: string): Promise<string[]> {
  let modules = built.get(fn);
  if (!modules) {
    modules = bundle(fn);
    built.set(fn, modules);
  }
  return modules;
}

async function bundle(fn: string): Promise<string[]> {
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

/** The SDK clients each function calls (docs/protocol.md), the committer's SQS on a commit failed for load. */
const CLIENTS: Record<string, string[]> = {
  batcher: ['client-dynamodb', 'client-s3', 'client-sqs'],
  committer: ['client-dynamodb', 'client-eventbridge', 'client-s3', 'client-sqs'],
  sweeper: ['client-dynamodb', 'client-sqs'],
  backfill: ['client-dynamodb', 'client-s3', 'client-sqs'],
  sink: ['client-dynamodb', 'client-glue', 'client-s3', 'client-sqs'],
  maintenance: ['client-s3'],
};

// A bundle is one file that V8 compiles at every cold start, and a module's top-level statements (a client
// class built by a call, a schema) stay in it when esbuild cannot prove them free of side effects, even
// if the function never uses them: the maintenance function once carried the DynamoDB client, lib-dynamodb
// and the ledger's adapters (80 KB) through the ledger functions' composition root, for one logger.
describe('each function’s bundle', () => {
  it.each(Object.entries(CLIENTS))(
    'holds only the SDK clients %s calls, and its own wiring',
    async (fn, clients) => {
      const modules = await bundledModules(fn);
      const packages = new Set(
        modules.flatMap(
          (path) => path.match(/node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//)?.slice(1) ?? [],
        ),
      );

      expect([...packages].sort()).toEqual(clients);
      const usesDynamoDb = clients.includes('client-dynamodb');
      expect(modules.some((path) => path.includes('/@aws-sdk/lib-dynamodb/'))).toBe(usesDynamoDb);
      const wiring = modules.filter((path) => path.startsWith('shared/runtime/'));
      const own = usesDynamoDb && fn !== 'sink' ? ['shared/runtime/ledger-runtime.ts'] : [];
      expect(wiring.sort()).toEqual([...own, `shared/runtime/${fn}.ts`].sort());
    },
  );
});

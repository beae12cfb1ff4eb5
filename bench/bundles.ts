// The batcher bundled as the CDK bundles it: its size, and its cold import time against the SDK clients' alone.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../local/paths.ts';
import { type Benchmark, log, percentile } from './support.ts';

export const bundles: Benchmark = {
  name: 'bundles',
  async run() {
    log('bundles');
    return { bundles: await measureBundles() };
  },
};

/** The batcher bundled as the CDK bundles it; its cold import time against the SDK clients' alone. */
async function measureBundles() {
  const dir = mkdtempSync(join(tmpdir(), 'inlet-bench-'));
  try {
    const options = {
      bundle: true,
      platform: 'node' as const,
      format: 'esm' as const,
      target: 'node22',
      minify: true,
      mainFields: ['module', 'main'],
      metafile: true,
      banner: {
        js: "import { createRequire as __inletRequire } from 'module'; const require = __inletRequire(import.meta.url);",
      },
      logLevel: 'silent' as const,
    };
    const batcher = await build({
      ...options,
      entryPoints: [join(projectRoot, 'functions', 'batcher.ts')],
      outfile: join(dir, 'batcher.mjs'),
    });
    const ownBytes = Object.entries(Object.values(batcher.metafile?.outputs ?? {})[0]?.inputs ?? {})
      .filter(([path]) => !path.includes('node_modules'))
      .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
    writeFileSync(
      join(dir, 'baseline.ts'),
      [
        "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
        "import { S3Client } from '@aws-sdk/client-s3';",
        "import { SQSClient } from '@aws-sdk/client-sqs';",
        'export const clients = [new DynamoDBClient({}), new S3Client({}), new SQSClient({})];',
      ].join('\n'),
    );
    await build({
      ...options,
      entryPoints: [join(dir, 'baseline.ts')],
      outfile: join(dir, 'baseline.mjs'),
      nodePaths: [join(projectRoot, 'node_modules')],
    });
    const env = {
      ...process.env,
      AWS_REGION: 'us-east-1',
      INLET_CONFIG: JSON.stringify({ tables: [{ name: 'events', prefix: 'events/' }] }),
      INLET_LEDGER_TABLE: 'ledger',
      INLET_MANIFEST_BUCKET: 'manifests',
      INLET_COMMIT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/commit.fifo',
      POWERTOOLS_METRICS_NAMESPACE: 'Inlet',
      NODE_NO_WARNINGS: '1',
    };
    const initMs = (file: string) => {
      const runs: number[] = [];
      for (let i = 0; i < 7; i++) {
        const result = spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`,
          ],
          { env, encoding: 'utf8' },
        );
        if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr}`);
        runs.push(Number(result.stdout.trim().split('\n').pop()));
      }
      return Math.round(percentile(runs, 50) * 10) / 10;
    };
    return {
      batcher: {
        bytes: statSync(join(dir, 'batcher.mjs')).size,
        ownBytes,
        initMs: initMs(join(dir, 'batcher.mjs')),
        sdkBaselineInitMs: initMs(join(dir, 'baseline.mjs')),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

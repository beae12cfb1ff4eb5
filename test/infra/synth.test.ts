import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/paths.ts';

describe('npx cdk synth', () => {
  it('synthesizes the app offline with cdk-nag AwsSolutions and no unacknowledged findings', () => {
    const out = mkdtempSync(join(tmpdir(), 'inlet-synth-'));
    try {
      const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
        cwd: projectRoot,
        encoding: 'utf8',
        env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
        // A whole synth bundles every function with esbuild: ~40 s alone, and past 120 s on a machine busy
        // with the rest of the suite (killed, status null). The bound only stops a hung synth.
        timeout: 300_000,
      });
      expect(result.stderr).not.toMatch(/ERROR|Synthesis finished with errors/);
      expect(result.status).toBe(0);
      const template = JSON.parse(readFileSync(join(out, 'Inlet.template.json'), 'utf8'));
      const functions = Object.values(
        template.Resources as Record<string, { Type: string; Properties: { Runtime?: string } }>,
      ).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Runtime === 'nodejs22.x');
      expect(functions).toHaveLength(5); // batcher, committer, sweeper, backfill, bronze sink (cdk.json has bronze tables)
      // The bundles are real esbuild output (no Docker), ESM.
      const assets = JSON.parse(readFileSync(join(out, 'Inlet.assets.json'), 'utf8')).files as Record<
        string,
        { source: { path: string } }
      >;
      const bundles = Object.values(assets).filter((a) => existsSync(join(out, a.source.path, 'index.mjs')));
      expect(bundles).toHaveLength(5);
      // The SDK's credential chain is cut to the environment's (infra/lambda-esbuild.ts): no SSO provider.
      for (const bundle of bundles)
        expect(readFileSync(join(out, bundle.source.path, 'index.mjs'), 'utf8')).not.toContain('fromSSO');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 300_000);
});

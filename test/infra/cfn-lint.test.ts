// An independent check of the synthesized template: cfn-lint (from PyPI, pinned in emulator/requirements.txt)
// validates it against CloudFormation's resource schemas, which neither CDK nor moto does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { venvDir } from '../../local/paths.ts';
import { ensureVenv } from '../../local/venv.ts';
import { cdkApp } from './cdk-app.ts';

/**
 * Warnings kept, by rule id, each with why; anything else (and every error) fails the test.
 * W3005 "obsolete DependsOn": CDK adds an explicit DependsOn next to a Ref/GetAtt on the same resource
 * (a function on its role, the notification custom resource on its queue). Harmless, and not ours to edit.
 */
const KEPT_WARNINGS: Record<string, RegExp> = {
  W3005: /dependency already enforced by a '(Ref|GetAtt)'/,
};

interface Finding {
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
  Location: { Path: (string | number)[] };
  Filename: string;
}

function synth(props: Partial<InletStackProps>): Record<string, unknown> {
  const app = cdkApp();
  const tables = [
    { name: 'orders', prefix: 'orders/' },
    { name: 'clicks', prefix: 'clicks/', suffix: '.json' },
  ];
  return Template.fromStack(new InletStack(app, 'Lint', { tables, ...props })).toJSON();
}

const VARIANTS: Record<string, Partial<InletStackProps>> = {
  'default (S3 notifications, retained)': {},
  'imported bucket via EventBridge, overwrites, reconcile, destroy': {
    landingBucketName: 'existing-landing',
    landingBucketVersioned: true,
    tables: [{ name: 'orders', prefix: 'orders/', allowOverwrites: true }],
    pipeline: { reconcile: { every: Duration.hours(1) }, removalPolicy: RemovalPolicy.DESTROY },
  },
  'created bucket, destroy (auto-delete custom resources)': {
    pipeline: { removalPolicy: RemovalPolicy.DESTROY },
  },
  'provisioned ledger with auto scaling': {
    pipeline: { ledgerCapacity: { mode: 'provisioned' } },
  },
};

describe('cfn-lint on the synthesized template', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inlet-cfn-lint-'));
  const fileOf = (name: string) => join(dir, `${name.replace(/\W+/g, '-')}.json`);
  let findings: Finding[] = [];
  // One cfn-lint run over all variants: its start-up (loading every resource schema) is most of its time.
  beforeAll(async () => {
    await ensureVenv();
    for (const [name, props] of Object.entries(VARIANTS))
      writeFileSync(fileOf(name), JSON.stringify(synth(props)));
    const files = Object.keys(VARIANTS).map(fileOf);
    const result = spawnSync(
      join(venvDir, 'bin', 'cfn-lint'),
      ['--format', 'json', '--non-zero-exit-code', 'none', ...files],
      { encoding: 'utf8', timeout: 240_000 },
    );
    expect(result.error).toBeUndefined();
    expect(result.status, result.stderr).toBe(0);
    findings = JSON.parse(result.stdout) as Finding[];
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const name of Object.keys(VARIANTS)) {
    it(`finds no errors and only the kept warnings: ${name}`, () => {
      const describe = (f: Finding) => `${f.Level} ${f.Rule.Id} ${f.Location.Path.join('/')}: ${f.Message}`;
      const unexpected = findings.filter(
        (f) =>
          f.Filename === fileOf(name) &&
          !(f.Level === 'Warning' && KEPT_WARNINGS[f.Rule.Id]?.test(f.Message)),
      );
      expect(unexpected.map(describe)).toEqual([]);
    });
  }
});

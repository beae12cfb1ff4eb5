import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll } from 'vitest';
import { projectRoot } from '../../local/paths.ts';

// Every test file that builds an app through here synthesizes into fresh cdk.out* folders in the temp folder
// (Template.fromStack). CDK removes them on process exit, which a vitest worker does not reach; this is its
// documented cleanup for test runners, registered on the importing file.
afterAll(() => CloudAssembly.cleanupTemporaryDirectories());

/**
 * An app with cdk.json's feature flags, as `cdk synth` and local mode apply them, and no Lambda bundling
 * (placeholder assets): template tests see what deploys, in milliseconds.
 */
export function cdkApp(): App {
  const { context } = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const flags = Object.fromEntries(Object.entries(context).filter(([key]) => key.startsWith('@aws-cdk')));
  return new App({ context: { ...flags, 'aws:cdk:bundling-stacks': [] } });
}

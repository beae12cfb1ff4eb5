import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { projectRoot } from '../../local/paths.ts';

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

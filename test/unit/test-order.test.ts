import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/paths.ts';
import { RUNS_BUNDLES } from '../support/runs-bundles.ts';

const integration = readdirSync(join(projectRoot, 'test', 'integration'))
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/integration/${name}`);
const text = (file: string) => readFileSync(join(projectRoot, file), 'utf8');

describe('the integration files that run the bundles', () => {
  it('are the ones that start functions (the runner, local mode), and each waits for the Lambda runtime', () => {
    const starts = integration.filter((file) => /new LocalRunner\(|'cli', 'start\.ts'/.test(text(file)));
    const waits = integration.filter((file) => text(file).includes('await waitForLambdaRuntime()'));
    expect([...RUNS_BUNDLES].sort()).toEqual([...new Set([...starts, ...waits])].sort());
    expect(waits.sort()).toEqual([...RUNS_BUNDLES].sort());
  });
});

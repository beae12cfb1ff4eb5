#!/usr/bin/env node
// The `inlet` CLI. It runs the esbuild bundle in cli/dist (built by `npm ci`, see build.mjs) when the bundle is
// newer than every source it was built from; otherwise it rebuilds it first, and if that is impossible it runs
// the TypeScript sources through tsx, as a checkout without the bundle always could.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliDir = dirname(fileURLToPath(import.meta.url));
const root = join(cliDir, '..');
const entry = join(cliDir, 'dist', 'inlet.js');

function bundleIsFresh() {
  try {
    const { builtAt, inputs } = JSON.parse(readFileSync(join(cliDir, 'dist', 'inputs.json'), 'utf8'));
    return inputs.every((input) => statSync(join(root, input)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

let bundled = bundleIsFresh();
if (!bundled) {
  try {
    await (await import('./build.mjs')).buildCli();
    bundled = true;
  } catch {
    // No esbuild, or a read-only checkout: the sources still run, only slower.
  }
}
if (bundled) {
  await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./inlet.ts');
}

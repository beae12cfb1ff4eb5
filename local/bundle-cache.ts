// Local mode synthesizes with bundling (it runs the bundles), which is esbuild once per function: ~10 s of a
// start-up. When nothing a bundle is made from has changed, the bundle is copied from the last synth instead.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { AssetStaging } from 'aws-cdk-lib';
import { cacheDir, projectRoot } from './paths.ts';

export const bundleCacheDir = join(cacheDir, 'bundles');

/**
 * What a function's bundle is made from, besides the bundling command: every file of the product code
 * (functions/, shared/ and infra/, where the bundling options are; the import-graph test keeps product code
 * from importing any other folder of the project), the TypeScript and npm configuration, and the installed
 * packages, which npm records in node_modules/.package-lock.json on every install (edits made by hand inside
 * node_modules are not seen: delete .cache/bundles, or set INLET_NO_BUNDLE_CACHE=1).
 */
function sourcesKey(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) hash.update(`${relative(projectRoot, path)}\0`).update(readFileSync(path));
    }
  };
  for (const dir of ['functions', 'shared', 'infra']) walk(join(projectRoot, dir));
  for (const file of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    join('node_modules', '.package-lock.json'),
  ]) {
    const path = join(projectRoot, file);
    hash.update(`${file}\0`).update(existsSync(path) ? readFileSync(path) : '');
  }
  return hash.digest('hex');
}

interface BundlingOptions {
  readonly local?: unknown;
  readonly command?: readonly string[];
  readonly environment?: Record<string, string>;
}

type Bundle = (this: unknown, options: BundlingOptions, bundleDir: string) => void;

let installed = false;

/**
 * Wraps the CDK's bundling step (AssetStaging's `bundle`, which runs esbuild into the directory the asset is
 * then hashed and staged from): a bundle whose inputs are unchanged since a bundle was cached is copied into
 * that directory instead, byte for byte, and the CDK hashes and stages it as if esbuild had just written it,
 * so the template and its asset hashes are those a bundling synth makes. The key is the sources (above) and,
 * per bundle, the bundling command the CDK built (entry, every esbuild flag, in the form it would run in
 * Docker, so without host paths), its environment, and the path from the output to the project (source maps
 * name sources relative to it). A CDK that no longer has this step bundles every time, as without the cache.
 */
export function useBundleCache(): void {
  if (installed || process.env.INLET_NO_BUNDLE_CACHE === '1') return;
  const proto = AssetStaging.prototype as unknown as { bundle?: Bundle };
  const original = proto.bundle;
  if (typeof original !== 'function') return;
  installed = true;
  let sources: string | undefined;
  proto.bundle = function (this: unknown, options: BundlingOptions, bundleDir: string) {
    if (!options.local || !options.command) return original.call(this, options, bundleDir);
    sources ??= sourcesKey();
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          sources,
          command: options.command,
          environment: options.environment ?? {},
          toProject: relative(bundleDir, projectRoot),
        }),
      )
      .digest('hex');
    const cached = join(bundleCacheDir, key);
    if (existsSync(cached) && !existsSync(bundleDir)) {
      cpSync(cached, bundleDir, { recursive: true });
      return;
    }
    original.call(this, options, bundleDir);
    // Kept under a temporary name first: a concurrent synth never copies a half-written bundle.
    const building = `${cached}.${process.pid}.tmp`;
    mkdirSync(bundleCacheDir, { recursive: true });
    cpSync(bundleDir, building, { recursive: true });
    try {
      renameSync(building, cached);
    } catch {
      rmSync(building, { recursive: true, force: true });
    }
    prune(bundleCacheDir, 20);
  };
}

/** Keeps the `keep` most recently made entries of a cache folder. */
export function prune(dir: string, keep: number): void {
  const entries = readdirSync(dir)
    .filter((name) => !name.endsWith('.tmp'))
    .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { name } of entries.slice(keep)) rmSync(join(dir, name), { recursive: true, force: true });
}

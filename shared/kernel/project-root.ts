import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above `from` whose package.json is the project's own (not the CLI workspace's). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'inlet') return dir;
    if (dirname(dir) === dir) throw new Error(`no Inlet package.json above ${from}`);
  }
}

/**
 * The repository root, found from this file so scripts work from any working directory and from the CLI's
 * bundle in cli/dist (which has this module inlined at another depth). Build-time only (infra/ resolves
 * function entries from it; local/ its state): no function bundle imports it.
 */
export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));

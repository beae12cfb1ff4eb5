import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root, resolved from this file so scripts work from any working directory. Build-time
 * only (infra/ resolves function entries from it; local/ its state): no function bundle imports it.
 */
export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

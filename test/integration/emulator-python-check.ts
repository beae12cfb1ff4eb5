import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { venvPython } from '../../local/paths.ts';

const run = promisify(execFile);

/**
 * Runs one of the launcher's in-process comparisons (`emulator_*.py` beside this file, moto's own code
 * against the launcher's) and returns its last line, "... 0 difference(s)" when they agree; throws with
 * the differences it printed when they do not.
 */
export async function launcherCheck(script: string, seed: number): Promise<string> {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const { stdout } = await run(venvPython, [path, '--seed', String(seed)]).catch(
    (error: { stdout?: string }) => {
      throw new Error(`${script} found differences:\n${error.stdout ?? String(error)}`);
    },
  );
  return stdout.trim().split('\n').at(-1) ?? '';
}

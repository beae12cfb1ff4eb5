import { type SpawnSyncOptionsWithStringEncoding, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type InstalledPiece, installOnce } from './install-once.ts';
import { requirementsFile, venvDir, venvPython } from './paths.ts';

/** Raised when the machine lacks a piece the emulator needs; the message names the piece and the fix. */
export class EmulatorSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmulatorSetupError';
  }
}

const venv = (): InstalledPiece => ({
  dir: venvDir,
  file: venvPython,
  stampFile: join(venvDir, '.inlet-requirements.sha256'),
  stamp: createHash('sha256').update(readFileSync(requirementsFile)).digest('hex'),
});

function run(cmd: string, args: string[], what: string): void {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new EmulatorSetupError(`${what}: could not run ${cmd}: ${result.error.message}`);
  if (result.status !== 0) throw new EmulatorSetupError(`${what} failed (${cmd} exited ${result.status})`);
}

/** The installer, pinned like everything else in the venv. */
const UV = 'uv==0.13.9';

/**
 * uv fetches and unpacks the pinned wheels in parallel: about 20 s on a fresh clone here, against 60-90 s
 * for pip, and `npm test` cannot start the emulator tests before the venv exists. It is put in the venv
 * with pip itself, so nothing outside the project changes; if it cannot be installed or cannot reach the
 * index (uv reads UV_INDEX_URL, not pip's configuration), pip does the install as before.
 */
function install(log: (line: string) => void): void {
  const quiet: SpawnSyncOptionsWithStringEncoding = { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' };
  const uv = spawnSync(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', UV],
    quiet,
  );
  if (uv.status === 0) {
    const viaUv = spawnSync(
      join(dirname(venvPython), 'uv'),
      ['pip', 'install', '--quiet', '--python', venvPython, '-r', requirementsFile],
      quiet,
    );
    if (viaUv.status === 0) return;
    log(`[inlet] uv could not install the emulator (${lastLine(viaUv.stderr)}); using pip`);
  } else {
    log(`[inlet] could not install uv (${lastLine(uv.stderr)}); using pip`);
  }
  run(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirementsFile],
    'pip install of the emulator',
  );
}

const lastLine = (text: string | null) => text?.trim().split('\n').pop() || 'no output';

function findPython(): string {
  for (const candidate of [process.env.INLET_PYTHON, 'python3', 'python'].filter(Boolean) as string[]) {
    const probe = spawnSync(candidate, ['-c', 'import sys; print(sys.version_info[:2] >= (3, 9))'], {
      encoding: 'utf8',
    });
    if (probe.status === 0 && probe.stdout.trim() === 'True') return candidate;
  }
  throw new EmulatorSetupError(
    'python3 >= 3.9 was not found on PATH. Install it (Debian: apt-get install python3 python3-venv python3-pip) or set INLET_PYTHON.',
  );
}

function checkModule(python: string, mod: string, debianPackage: string): void {
  const probe = spawnSync(python, ['-c', `import ${mod}`], { encoding: 'utf8' });
  if (probe.status !== 0) {
    throw new EmulatorSetupError(
      `${python} has no '${mod}' module, needed to create the emulator venv. Install it (Debian: apt-get install ${debianPackage}).`,
    );
  }
}

/**
 * Creates `.venv` with the pinned moto server, once. A second call with unchanged
 * `emulator/requirements.txt` does nothing; a changed file reinstalls.
 * @returns the venv's python path
 */
export async function ensureVenv(log: (line: string) => void = console.error): Promise<string> {
  const piece = venv();
  await installOnce(
    piece,
    () => {
      const python = findPython();
      checkModule(python, 'venv', 'python3-venv');
      checkModule(python, 'ensurepip', 'python3-venv python3-pip');
      log(`[inlet] creating the emulator venv in ${venvDir} (moto server, pinned; under a minute, once)`);
      rmSync(venvDir, { recursive: true, force: true });
      run(python, ['-m', 'venv', venvDir], 'creating the venv');
      install(log);
      log('[inlet] emulator venv ready');
    },
    10 * 60_000,
  );
  return venvPython;
}

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type InstalledPiece, installOnce } from './install-once.ts';
import { engineRequirementsFile, requirementsFile, venvDir, venvPython } from './paths.ts';

/** Raised when the machine lacks a piece the emulator needs; the message names the piece and the fix. */
export class EmulatorSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmulatorSetupError';
  }
}

/**
 * The venv and the engines added to it: one folder, so one lock (`.venv.lock`). The engines' stamp is inside
 * the venv: a venv rebuilt for new emulator pins loses it, and the engines are installed again.
 */
const venvPiece = (stampName: string, requirements: string): InstalledPiece => ({
  dir: venvDir,
  file: venvPython,
  stampFile: join(venvDir, stampName),
  stamp: createHash('sha256').update(readFileSync(requirements)).digest('hex'),
});
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Runs a command without blocking this process (the Lambda runtime installs beside the venv, in the same
 * process): its exit status and its stderr, or how it could not start.
 */
function spawned(cmd: string, args: string[], stderr: 'pipe' | 'inherit') {
  return new Promise<{ status: number | null; stderr: string; error?: Error }>((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', stderr === 'pipe' ? 'ignore' : 'inherit', stderr] });
    let text = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    child.once('error', (error) => resolve({ status: null, stderr: text, error }));
    child.once('close', (status) => resolve({ status, stderr: text }));
  });
}

async function run(cmd: string, args: string[], what: string): Promise<void> {
  const result = await spawned(cmd, args, 'inherit');
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
async function install(log: (line: string) => void, requirements: string, what: string): Promise<void> {
  const uv = await spawned(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', UV],
    'pipe',
  );
  if (uv.status === 0) {
    const viaUv = await spawned(
      join(dirname(venvPython), 'uv'),
      ['pip', 'install', '--quiet', '--python', venvPython, '-r', requirements],
      'pipe',
    );
    if (viaUv.status === 0) return;
    log(`[inlet] uv could not install ${what} (${lastLine(viaUv.stderr)}); using pip`);
  } else {
    log(`[inlet] could not install uv (${lastLine(uv.stderr)}); using pip`);
  }
  await run(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements],
    `pip install of ${what}`,
  );
}

const lastLine = (text: string | null) => text?.trim().split('\n').pop() || 'no output';

/** What the AWS CLI imports: the integration suite runs it dozens of times. */
const CLI_PACKAGES = [
  'awscli',
  'urllib3',
  'yaml',
  'docutils',
  'dateutil',
  'rsa',
  'pyasn1',
  'jmespath',
  'colorama',
];

/**
 * Compiles the AWS CLI's packages to bytecode once. Neither installer does by default, and where
 * PYTHONDONTWRITEBYTECODE is set (this machine's environment) Python compiles every module it imports
 * afresh in every process: measured 4.5-5 s for `aws --version`, 1 s with the bytecode (2 busy cores).
 */
function compileCli(): Promise<void> {
  const script =
    'import compileall, importlib.util, os, sys\n' +
    'for name in sys.argv[1:]:\n' +
    '    compileall.compile_dir(os.path.dirname(importlib.util.find_spec(name).origin), quiet=1, workers=0)\n';
  return run(venvPython, ['-c', script, ...CLI_PACKAGES], 'compiling the AWS CLI');
}

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
  await installOnce(
    venvPiece('.inlet-requirements.sha256', requirementsFile),
    async () => {
      const python = findPython();
      checkModule(python, 'venv', 'python3-venv');
      checkModule(python, 'ensurepip', 'python3-venv python3-pip');
      log(`[inlet] creating the emulator venv in ${venvDir} (moto server, pinned; under a minute, once)`);
      rmSync(venvDir, { recursive: true, force: true });
      await run(python, ['-m', 'venv', venvDir], 'creating the venv');
      await install(log, requirementsFile, 'the emulator');
      await compileCli();
      log('[inlet] emulator venv ready');
    },
    STALE_LOCK_MS,
  );
  return venvPython;
}

/**
 * Adds the reference engines of `npm run test:engines` (pyspark, about 450 MB, pinned in
 * `test/engines/requirements.txt`) to the same venv, once, by the same installer. Only that script calls
 * it: `npm test` never installs them.
 * @returns the venv's python path
 */
export async function ensureEnginesVenv(log: (line: string) => void = console.error): Promise<string> {
  await ensureVenv(log);
  await installOnce(
    venvPiece('.inlet-engines.sha256', engineRequirementsFile),
    async () => {
      log('[inlet] adding the reference engines to the venv (pyspark, pinned; about a minute, once)');
      await install(log, engineRequirementsFile, 'the reference engines');
      log('[inlet] reference engines ready');
    },
    STALE_LOCK_MS,
  );
  return venvPython;
}

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, resolved from this file so scripts work from any working directory. */
export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

export const venvDir = join(projectRoot, '.venv');
export const requirementsFile = join(projectRoot, 'emulator', 'requirements.txt');
export const motoLauncher = join(projectRoot, 'local', 'moto_launcher.py');
export const venvPython = join(venvDir, 'bin', 'python');

import { join } from 'node:path';
import { projectRoot } from '../shared/project-root.ts';

export { projectRoot };

export const venvDir = join(projectRoot, '.venv');
export const requirementsFile = join(projectRoot, 'emulator', 'requirements.txt');
export const motoLauncher = join(projectRoot, 'local', 'moto_launcher.py');
export const venvPython = join(venvDir, 'bin', 'python');

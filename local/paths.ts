import { join } from 'node:path';
import { projectRoot } from '../shared/kernel/project-root.ts';

export { projectRoot };

export const venvDir = join(projectRoot, '.venv');
/** What local mode and the tests build once and keep (git-ignored): the Lambda runtime, bundles, engine jars. */
export const cacheDir = join(projectRoot, '.cache');
export const requirementsFile = join(projectRoot, 'emulator', 'requirements.txt');
export const motoLauncher = join(projectRoot, 'local', 'moto_launcher.py');
export const venvPython = join(venvDir, 'bin', 'python');

/** `npm run test:engines` only: pyspark's pins, the Maven jars Spark reads Delta and S3 with, and their cache. */
export const engineRequirementsFile = join(projectRoot, 'test', 'engines', 'requirements.txt');
export const engineJarsFile = join(projectRoot, 'test', 'engines', 'jars.txt');
export const enginesCacheDir = join(cacheDir, 'engines');

// `npm test` / `npm start` pre-step: make sure the emulator venv exists before anything else runs.
// `--engines` (npm run test:engines): also the reference engines, pyspark in the venv and the Maven jars.
import { ensureEngineJars } from './engine-jars.ts';
import { ensureEnginesVenv, ensureVenv } from './venv.ts';

if (process.argv.includes('--engines')) {
  await ensureEnginesVenv();
  ensureEngineJars();
} else {
  await ensureVenv();
}

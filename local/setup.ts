// `npm test` / `npm start` pre-step: the emulator venv and the Lambda runtime the functions run under,
// installed (once) side by side. `--engines` (npm run test:engines): the reference engines instead, pyspark in
// the venv and the Maven jars.
import { ensureEngineJars } from './engine-jars.ts';
import { ensureLambdaRuntime } from './lambda/install.ts';
import { ensureEnginesVenv, ensureVenv } from './venv.ts';

if (process.argv.includes('--engines')) {
  await ensureEnginesVenv();
  ensureEngineJars();
} else {
  await Promise.all([ensureVenv(), ensureLambdaRuntime()]);
}

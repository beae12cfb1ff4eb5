// `npm test` / `npm start` pre-step: the emulator venv and the Lambda runtime the functions run under,
// installed (once) side by side. `--venv` or `--lambda-runtime`: only that one (`npm test` starts the
// integration files that need only the emulator as soon as the venv is there, test/run.ts). `--engines`
// (npm run test:engines): the reference engines instead, pyspark in the venv and the Maven jars.
import { ensureEngineJars } from './engine-jars.ts';
import { ensureLambdaRuntime } from './lambda/install.ts';
import { ensureEnginesVenv, ensureVenv } from './venv.ts';

const only = (flag: string) => process.argv.includes(flag);

if (only('--engines')) {
  await ensureEnginesVenv();
  ensureEngineJars();
} else if (only('--venv')) {
  await ensureVenv();
} else if (only('--lambda-runtime')) {
  await ensureLambdaRuntime();
} else {
  await Promise.all([ensureVenv(), ensureLambdaRuntime()]);
}

// `npm test` / `npm start` pre-step: the emulator venv and the Lambda runtime, installed (once) side by side.
import { ensureLambdaRuntime } from './lambda/install.ts';
import { ensureVenv } from './venv.ts';

await Promise.all([ensureVenv(), ensureLambdaRuntime()]);

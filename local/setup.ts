// `npm test` / `npm start` pre-step: make sure the emulator venv exists before anything else runs.
import { ensureVenv } from './venv.ts';

await ensureVenv();

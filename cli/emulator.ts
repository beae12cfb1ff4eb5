// `npm run emulator`: only the local AWS emulator, until Ctrl-C. Point `npm start -- --endpoint URL`,
// the CLI (INLET_AWS_ENDPOINT) or the integration suite at the printed endpoint.
import { startEmulator } from '../local/emulator.ts';

const port = Number(process.env.INLET_EMULATOR_PORT ?? 0);
const emulator = await startEmulator({ port });
console.log(`moto server: ${emulator.endpoint} (pid ${emulator.pid}); Ctrl-C stops it`);
console.log(`export INLET_AWS_ENDPOINT=${emulator.endpoint}`);
const stop = async () => {
  await emulator.stop();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
setInterval(() => {}, 1 << 30);

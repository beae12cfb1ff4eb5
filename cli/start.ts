// `npm start`: the local pipeline. For now it starts the emulator and prints its endpoint; the local-mode
// issue replaces this with resources, pollers and the real handlers.
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

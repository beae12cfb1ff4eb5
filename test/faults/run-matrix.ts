// `npm run test:faults`: the whole crash matrix against a private emulator (or INLET_AWS_ENDPOINT).
// Last line: `faults: <N> scenarios, <L> lost, <D> duplicated`; exit 1 when anything was lost, duplicated
// or broke an invariant.
import { startEmulator } from '../../local/emulator.ts';
import { createClients, destroyClients } from '../../shared/aws/clients.ts';
import { emulatorTarget, targetFromEnv } from '../../shared/aws/target.ts';
import { runMatrix, summaryLine } from './matrix.ts';

const fromEnv = targetFromEnv();
const emulator = fromEnv ? undefined : await startEmulator();
const clients = createClients(fromEnv ?? emulatorTarget(emulator?.endpoint ?? ''));
let failed = false;
try {
  const { points, results } = await runMatrix(clients, {
    concurrency: Number(process.env.INLET_FAULT_CONCURRENCY ?? 4),
    onResult: (r) => {
      const bad = r.lost.length > 0 || r.duplicated.length > 0 || r.problems.length > 0;
      if (bad) failed = true;
      const detail = bad
        ? `  lost=${r.lost.join(',')} dup=${r.duplicated.join(',')} ${r.problems.join('; ')}`
        : '';
      console.log(`${bad ? 'FAIL' : 'ok  '} ${r.scenario.name} (${r.ms} ms)${detail}`);
    },
  });
  console.log(`crash points: ${points.length} (${points.join(', ')})`);
  console.log(summaryLine(results));
} finally {
  destroyClients(clients);
  await emulator?.stop();
}
process.exit(failed ? 1 : 0);

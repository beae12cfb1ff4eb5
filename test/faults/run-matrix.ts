// `npm run test:faults [-- --moto]`: the whole crash matrix, on the in-memory fakes (seconds), or with
// --moto on a private emulator (or INLET_AWS_ENDPOINT; minutes). Last line:
// `faults: <N> scenarios, <L> lost, <D> duplicated`; exit 1 when anything was lost, duplicated or broke
// an invariant. --variant NAME plugs a broken protocol of test/sim/variants.ts into the fakes (it must fail).
import { parseArgs } from 'node:util';
import type { AwsClients } from '../../local/aws/clients.ts';
import { VARIANTS, type VariantName } from '../sim/variants.ts';
import { type MatrixTarget, runMatrix, summaryLine } from './matrix.ts';
import { memoryTarget } from './targets.ts';

const { values } = parseArgs({
  options: { moto: { type: 'boolean', default: false }, variant: { type: 'string' } },
});
const variant = values.variant as VariantName | undefined;
if (variant && !(variant in VARIANTS)) {
  console.error(`unknown variant ${variant}; one of: ${Object.keys(VARIANTS).join(', ')}`);
  process.exit(2);
}
if (variant && values.moto) {
  console.error('--variant runs on the fakes only');
  process.exit(2);
}

let failed = false;
let cleanup = async () => {};
let target: MatrixTarget = memoryTarget(variant);
if (values.moto) {
  // Only --moto starts the emulator: the fakes need no Python.
  const { startEmulator } = await import('../../local/emulator.ts');
  const { createClients, destroyClients } = await import('../../local/aws/clients.ts');
  const { emulatorTarget, targetFromEnv } = await import('../../shared/kernel/aws/target.ts');
  const { motoTarget } = await import('./targets.ts');
  const fromEnv = targetFromEnv();
  const started = fromEnv ? undefined : await startEmulator();
  const clients: AwsClients = createClients(fromEnv ?? emulatorTarget(started?.endpoint ?? ''));
  target = motoTarget(clients);
  cleanup = async () => {
    destroyClients(clients);
    await started?.stop();
  };
}
try {
  const { points, results } = await runMatrix(target, {
    // The fakes share one hook on the clock: one scenario at a time, every occurrence of every call.
    concurrency: values.moto ? Number(process.env.INLET_FAULT_CONCURRENCY ?? 4) : 1,
    occurrences: values.moto ? 'ends' : 'all',
    onResult: (r) => {
      const bad = r.lost.length > 0 || r.duplicated.length > 0 || r.problems.length > 0;
      if (bad) failed = true;
      const detail = bad
        ? `  lost=${r.lost.join(',')} dup=${r.duplicated.join(',')} ${r.problems.join('; ')}`
        : '';
      console.log(`${bad ? 'FAIL' : 'ok  '} ${r.scenario.name} (${r.ms} ms)${detail}`);
    },
  });
  console.log(
    `target: ${values.moto ? 'emulator' : 'in-memory fakes'}${variant ? `, variant ${variant}` : ''}`,
  );
  console.log(`crash points: ${points.length} (${points.join(', ')})`);
  console.log(summaryLine(results));
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);

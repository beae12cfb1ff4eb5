/**
 * `npm run test:sim -- --seeds N [--seed S] [--workers B,C,S,K] [--variant NAME] [--scenario clean]
 * [--heartbeat held|flaky|lost] [--trace] [--digest]` (`--scenario optimize`: two optimizes and a vacuum on the
 * bronze table beside the sink)
 * (`--scenario clean`: two bronze tables over one prefix with cleanSource, landing keys rewritten; world.ts;
 * `--heartbeat`: how the sink's visibility lease fares in every seed, `flaky` and `lost` letting two sinks
 * run one table at once; `--digest`: one line per seed with the SHA-256 of its whole trace, step count and
 * end time, so two runs, or two commits, can be compared seed by seed)
 * Runs seeds S..S+N-1; each failing seed prints its violations, the tail of its trace and the one
 * command that replays it. Ends with `simulation: <S> seeds, <V> violations`.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_WORKERS, type SimOptions, simulate, type Workers } from './simulate.ts';
import { VARIANTS, type VariantName } from './variants.ts';
import type { Scenario, SinkHeartbeat } from './world.ts';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    workers: { type: 'string' },
    variant: { type: 'string' },
    scenario: { type: 'string', default: 'plain' },
    heartbeat: { type: 'string' },
    trace: { type: 'boolean', default: false },
    digest: { type: 'boolean', default: false },
  },
});

const count = Number(values.seeds);
const first = Number(values.seed);
const workers: Workers = values.workers
  ? (() => {
      const [batchers = 3, committers = 2, sweepers = 1, sinks = 2] = values.workers.split(',').map(Number);
      return { batchers, committers, sweepers, sinks };
    })()
  : DEFAULT_WORKERS;
const variant = values.variant as VariantName | undefined;
if (variant && !(variant in VARIANTS)) {
  console.error(`unknown variant ${variant}; one of: ${Object.keys(VARIANTS).join(', ')}`);
  process.exit(2);
}

const scenario = values.scenario as Scenario;
if (!['plain', 'clean', 'optimize'].includes(scenario)) {
  console.error(`unknown scenario ${scenario}; one of: plain, clean, optimize`);
  process.exit(2);
}

const heartbeat = values.heartbeat as SinkHeartbeat | undefined;
if (heartbeat !== undefined && !['held', 'flaky', 'lost'].includes(heartbeat)) {
  console.error(`unknown heartbeat ${heartbeat}; one of: held, flaky, lost`);
  process.exit(2);
}

const started = Date.now();
let failedSeeds = 0;
let violations = 0;
let overlaps = 0;
let overlapSeeds = 0;
for (let seed = first; seed < first + count; seed++) {
  const options: Pick<SimOptions, 'plumbing' | 'scenario'> = variant ? VARIANTS[variant] : {};
  const plumbing = { ...options.plumbing, ...(heartbeat ? { sinkHeartbeat: heartbeat } : {}) };
  const result = await simulate({ seed, workers, scenario, ...options, plumbing });
  if (values.digest) console.log(`seed ${seed}: ${result.digest}`);
  overlaps += result.world.sinkOverlaps;
  if (result.world.sinkOverlaps > 0) overlapSeeds += 1;
  if (result.violations.length === 0) continue;
  failedSeeds += 1;
  violations += result.violations.length;
  const replay = [
    `npm run test:sim -- --seeds 1 --seed ${seed}`,
    values.workers ? `--workers ${values.workers}` : '',
    variant ? `--variant ${variant}` : '',
    scenario !== 'plain' ? `--scenario ${scenario}` : '',
    heartbeat ? `--heartbeat ${heartbeat}` : '',
    '--trace',
  ]
    .filter(Boolean)
    .join(' ');
  console.log(
    `\nseed ${seed}: ${result.violations.length} violation(s) after ${result.steps} steps, ${result.simSeconds} s simulated`,
  );
  for (const v of result.violations) console.log(`  ${v}`);
  const tail = values.trace ? result.trace : relevant(result.trace, result.violations);
  console.log(`  trace (${values.trace ? 'all' : 'lines naming its files and batches'}):`);
  for (const line of tail) console.log(`    ${line}`);
  console.log(`  replay: ${replay}`);
}
console.log(
  `\n${scenario} scenario: ${count} seeds in ${((Date.now() - started) / 1000).toFixed(1)} s; ${failedSeeds} failing seed(s)` +
    `\nsinks on one table at once: ${overlaps} times, in ${overlapSeeds} seed(s)` +
    `\nsimulation: ${count} seeds, ${violations} violations`,
);
process.exitCode = violations > 0 ? 1 : 0;

/** The trace lines that name a file or batch of a violation: who did what to it, in order. */
function relevant(trace: readonly string[], found: readonly string[]): string[] {
  const names = new Set(found.flatMap((v) => v.match(/B\d{4}|\w+\/f\d+\.json/g) ?? []));
  // The bronze sink's violations name versions, not files: show what the sinks did to the Delta table.
  if (found.some((v) => /^D\d/.test(v))) for (const n of [' sink.', '_bronze', 'SinkCursor']) names.add(n);
  const lines = trace.filter((line) => [...names].some((n) => line.includes(n)));
  return lines.length > 60 ? [...lines.slice(0, 30), '...', ...lines.slice(-30)] : lines;
}

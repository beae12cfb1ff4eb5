// `npm start`: the whole pipeline on this machine, against the local emulator, each function's bundle run
// as Lambda runs it (local/lambda/).
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { DemoPlan } from '../local/demo.ts';
import { LOCAL_TIMEOUT_SECONDS, localTimings } from '../local/timings.ts';
import { sayNodeSupport } from './node-support.ts';

/** A commander parser for a whole number in [min, max]; anything else is refused before anything starts. */
function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`an integer from ${min} to ${max}`);
    return n;
  };
}

const program = new Command('npm start --')
  .description(
    'Run the Inlet pipeline locally: emulator, resources from the CDK stack, the bundled functions under the Lambda Runtime API.',
  )
  .option('--demo', 'upload demo files (duplicates, awkward keys, temp files) and a few bad messages')
  .option('--available-now', 'ingest until nothing is pending, print a JSON summary as the last line, exit')
  .option('--endpoint <url>', 'use an emulator that is already running (default: a background one, reused)')
  .option('--files-per-table <n>', 'demo files per table', wholeNumber(1, 10_000), 20)
  .option('--stack-name <name>', 'stack name in the emulator (default: cdk.json inlet:stackName)')
  .option(
    '--timeout-seconds <n>',
    'function timeout; a killed run is picked up after 6x (queue visibility, set when the stack is created) and its claims after 2x (lease)',
    wholeNumber(1, 900),
    LOCAL_TIMEOUT_SECONDS,
  )
  .option('--no-view', 'no live status line')
  .parse();
const opts = program.opts<{
  demo?: boolean;
  availableNow?: boolean;
  endpoint?: string;
  filesPerTable: number;
  view: boolean;
  stackName?: string;
  timeoutSeconds: number;
}>();

// The rest is imported once the flags are known good: a typo or `--help` answers without loading the SDK,
// the handlers and the emulator plumbing.
const [
  { runDemo },
  { bringUpLocalStack },
  { LocalRunner },
  { ensureBackgroundEmulator, localConfigOf, stateDir, writeLocalConfig },
  { bronzeSummary, committedFiles, committedTotals, liveLine, recentDays, withBronzeFields },
  { createClients },
  { DEFAULT_EMULATOR_REGION, emulatorTarget },
  { configFromEnv },
  { OUTPUTS },
] = await Promise.all([
  import('../local/demo.ts'),
  import('../local/local-stack.ts'),
  import('../local/runner.ts'),
  import('../local/state.ts'),
  import('../local/summary.ts'),
  import('../shared/aws/clients.ts'),
  import('../shared/aws/target.ts'),
  import('../shared/config.ts'),
  import('../shared/names.ts'),
]);

const say = (line: string) => process.stderr.write(`[inlet] ${line}\n`);
sayNodeSupport('[inlet] ');
const region = process.env.AWS_REGION ?? DEFAULT_EMULATOR_REGION;
const emulator = opts.endpoint ? { endpoint: opts.endpoint, reused: true } : await ensureBackgroundEmulator();
say(`emulator ${emulator.endpoint}${emulator.reused ? ' (reused)' : ''}`);
const clients = createClients(emulatorTarget(emulator.endpoint, region));
const stack = await bringUpLocalStack(clients, {
  ...localTimings(opts.timeoutSeconds),
  ...(opts.stackName ? { 'inlet:stackName': opts.stackName } : {}),
});
say(
  `stack ${stack.stackName} ${stack.created ? 'deployed from the synthesized template' : 'found (resuming)'}`,
);
const o = stack.outputs;
writeLocalConfig(
  localConfigOf(
    {
      ...stack,
      // Tables with a Delta sink gain bronzeLocation and bronzeFormat (../shared/design.md §5).
      tables: withBronzeFields(
        stack.tables,
        configFromEnv(stack.environment.Committer),
        o[OUTPUTS.manifestBucket] ?? '',
      ),
    },
    emulator.endpoint,
    region,
  ),
);
say(
  `functions: ${stack.functions.length} bundles, each in its own process under the Lambda Runtime Interface Emulator`,
);
say(
  `wrote .inlet/local.json; landing bucket s3://${o[OUTPUTS.landingBucket]} (tables: ${stack.tables.map((t) => `${t.name} <- ${t.prefix || '*'}`).join(', ')})`,
);

const runner = new LocalRunner({
  clients,
  stack,
  endpoint: emulator.endpoint,
  region,
  logFile: join(stateDir, 'pipeline.log'),
});
const baseline = {
  committed: await committedFiles(runner.store, stack.tables),
  heads: await committedTotals(runner.ledger, stack.tables),
  quarantined: (await runner.ledger.listQuarantine(recentDays(2))).length,
};
runner.start();
let plan: DemoPlan | undefined;
if (opts.demo) {
  plan = await runDemo(clients, stack, opts.filesPerTable);
  say(
    `demo: ${plan.files} files, ${plan.duplicateUploads} re-uploads, ${plan.skipped} skipped uploads, ${plan.badInputs} bad messages`,
  );
}

const total = (name: string) => runner.metrics.totals.get(name) ?? 0;
const live = process.stderr.isTTY && opts.view;
let lastPrinted = 0;
async function view(): Promise<void> {
  if (!opts.view) return;
  if (!live && Date.now() - lastPrinted < 5_000) return;
  lastPrinted = Date.now();
  const d = await runner.depths();
  const line = liveLine(runner.metrics.totals, d, {
    now: await committedTotals(runner.ledger, stack.tables),
    baseline: baseline.heads,
  });
  process.stderr.write(live ? `\r\x1b[K${line}` : `${line}\n`);
}

if (opts.availableNow) {
  await runner.untilQuiet(view);
  await runner.stop();
  if (live) process.stderr.write('\n');
  const now = await committedFiles(runner.store, stack.tables);
  const quarantinedNow = (await runner.ledger.listQuarantine(recentDays(2))).length;
  const committed = now.files - baseline.committed.files;
  const quarantined = quarantinedNow - baseline.quarantined;
  const files = plan ? plan.files + plan.badInputs : committed + quarantined;
  const versionsOk = await Promise.all(
    stack.tables.map(async (t) =>
      (await runner.store.listManifestVersions(t.name)).every((v, i) => v === i + 1),
    ),
  );
  const summary = {
    files,
    committed,
    duplicatesDropped: total('DuplicatesDropped'),
    versions: now.versions,
    quarantined,
    ...(runner.bronze ? { bronze: await bronzeSummary(runner.bronze.cursors, runner.bronze.tables) } : {}),
  };
  const ok = committed + quarantined === files && versionsOk.every(Boolean);
  if (!ok)
    say(
      `MISMATCH: committed ${committed} + quarantined ${quarantined} != files ${files}, or versions not contiguous`,
    );
  say(`done. The emulator keeps running with the data: npx inlet status | npx inlet down stops it`);
  console.log(JSON.stringify(summary));
  process.exit(ok ? 0 : 1);
}

say('running; drop files into the landing bucket (npx inlet put FILE --table T); Ctrl-C stops the pipeline');
const timer = setInterval(() => void view().catch(() => undefined), 500);
const shutdown = async () => {
  clearInterval(timer);
  if (live) process.stderr.write('\n');
  say('stopping: finishing the invocations in flight');
  await runner.stop();
  say(`stopped. The emulator keeps the data at ${emulator.endpoint}; npx inlet down stops it`);
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

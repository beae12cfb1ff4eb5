// `npm start`: the whole pipeline on this machine, against the local emulator, each function's bundle run
// as Lambda runs it (local/lambda/), every AWS call it makes checked against its role (local/iam/).
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
  .option(
    '--aws-latency',
    "hold each AWS call the functions, their event source mappings and Step Functions make for AWS's typical latency of its operation (local/aws-latencies.ts)",
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
  awsLatency?: boolean;
}>();

// The rest is imported once the flags are known good: a typo or `--help` answers without loading the SDK,
// the runtime and the emulator plumbing.
const [
  { runDemo },
  { bringUpLocalStack },
  { LocalRunner, fileLog },
  { StepFunctionsExecutor },
  { ExecutionsApiError },
  { ensureBackgroundEmulator, glueDatabaseOf, localConfigOf, stateDir, writeLocalConfig },
  { bronzeSummary, committedFiles, committedTotals, liveLine, recentDays, withBronzeFields },
  { createClients },
  { DEFAULT_EMULATOR_REGION, emulatorTarget },
  { configFromEnv },
  { OUTPUTS },
  { startLocalIamCheck },
  { describeDenials },
  { ensureLambdaRuntime },
  { holdInFrontOf },
  { latencyOf },
] = await Promise.all([
  import('../local/demo.ts'),
  import('../local/local-stack.ts'),
  import('../local/runner.ts'),
  import('../local/step-functions/executor.ts'),
  import('../local/step-functions/executions-api.ts'),
  import('../local/state.ts'),
  import('../local/summary.ts'),
  import('../local/aws/clients.ts'),
  import('../shared/kernel/aws/target.ts'),
  import('../shared/config/pipeline-config.ts'),
  import('../shared/kernel/names.ts'),
  import('../local/iam/local-check.ts'),
  import('../local/iam/client.ts'),
  import('../local/lambda/install.ts'),
  import('../local/latency-proxy.ts'),
  import('../local/aws-latencies.ts'),
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
      // Tables with a Delta sink gain bronzeLocation and bronzeFormat (docs/emulator.md, "What local mode writes").
      tables: withBronzeFields(
        stack.tables,
        configFromEnv(stack.environment.Committer),
        o[OUTPUTS.manifestBucket] ?? '',
        // The stack's Glue database, as its output names it.
        glueDatabaseOf(stack),
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

const pipelineLog = join(stateDir, 'pipeline.log');
// Every AWS call a function makes is checked against its role (and the resource's policy) from the template.
const iamCheck = await startLocalIamCheck({
  upstream: emulator.endpoint,
  stackName: stack.stackName,
  stack: stack.iam,
  decisionsFile: join(stateDir, 'iam-decisions.jsonl'),
});
say(
  `IAM check: each function calls as its role through ${iamCheck.iam.endpoint} (.inlet/iam-decisions.jsonl)`,
);
// With AWS's latencies: a proxy in front of the IAM check holds every call that goes through the check (the
// functions', their event source mappings', the state machine's) for its operation's latency on AWS.
const held = opts.awsLatency ? await holdInFrontOf(iamCheck.iam, latencyOf) : undefined;
if (held) say(`AWS latencies: every call through the IAM check is held first by ${held.proxy.endpoint}`);
const access = held?.iam ?? iamCheck.iam;
const runner = new LocalRunner({
  clients,
  stack,
  // Installed by `npm start`'s setup step; waited for if another process is installing it now.
  runtime: await ensureLambdaRuntime(),
  endpoint: emulator.endpoint,
  region,
  logFile: pipelineLog,
  iam: access,
  heldMessagesFile: join(stateDir, 'held-messages.json'),
});
/** Requests AWS would have refused: each was answered AccessDenied here too. */
const sayDenials = () => {
  const denials = iamCheck.proxy.check.unexpectedDenials();
  if (denials.length > 0)
    say(`IAM check: AWS would deny ${denials.length} request(s):\n${describeDenials(denials)}`);
  return denials.length;
};
const baseline = {
  committed: await committedFiles(runner.store, stack.tables),
  heads: await committedTotals(runner.ledger, stack.tables),
  quarantined: (await runner.ledger.listQuarantine(recentDays(2))).length,
};
const givenBack = await runner.giveBackLeftovers();
if (givenBack > 0) say(`gave back ${givenBack} message(s) the previous run held when it was stopped`);
runner.start();
// Step Functions, locally: every execution of the stack's state machines, whoever starts it (the AWS CLI,
// an SDK, EventBridge, `inlet backfill start`), runs here; the emulator keeps its state.
const executor = new StepFunctionsExecutor({
  clients,
  endpoint: emulator.endpoint,
  region,
  stackName: stack.stackName,
  // Its tasks invoke the functions' bundles as the runner's mappings do, each calling AWS as its role.
  invoker: runner.host,
  // The state machine's own calls (invoking the function, continuing as new) are authorized against its role.
  iam: access,
  log: fileLog(pipelineLog, 'local-step-functions'),
});
const executing = await executor.start().then(
  () => true,
  (error: unknown) => {
    if (!(error instanceof ExecutionsApiError)) throw error;
    say(`${error.message}: Step Functions executions started there are not run here`);
    return false;
  },
);
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
  // An execution running (a backfill enqueueing) is work pending too; what it enqueued is then ingested.
  while (executing && executor.busy) {
    await executor.idle();
    await runner.untilQuiet(view);
  }
  if (executing) await executor.stop();
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
  const iamDenied = sayDenials();
  const summary = {
    files,
    committed,
    duplicatesDropped: total('DuplicatesDropped'),
    versions: now.versions,
    quarantined,
    ...(runner.bronze ? { bronze: await bronzeSummary(runner.bronze.cursors, runner.bronze.tables) } : {}),
    iamDenied,
    // With --aws-latency: the requests held, by operation.
    ...(held ? { requestsHeld: held.proxy.delayed().requests } : {}),
  };
  const ok = committed + quarantined === files && versionsOk.every(Boolean) && iamDenied === 0;
  if (!ok)
    say(
      `MISMATCH: committed ${committed} + quarantined ${quarantined} != files ${files}, versions not contiguous, or ${iamDenied} request(s) AWS would deny`,
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
  if (executing) await executor.stop();
  await runner.stop();
  sayDenials();
  await held?.proxy.stop();
  await iamCheck.proxy.stop();
  say(`stopped. The emulator keeps the data at ${emulator.endpoint}; npx inlet down stops it`);
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

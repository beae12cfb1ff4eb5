/**
 * `npm test`: the unit project and the emulator-backed integration project side by side.
 *
 * One `vitest run` cannot do this: vitest 4 runs a project whose files go one at a time
 * (`fileParallelism: false`, which the integration project needs, see vitest.config.ts) in a group of its
 * own after every other project, so the unit project's CPU work (CDK synth, cfn-lint, the simulation) and
 * the integration project's waiting on moto added up instead of overlapping. Here the unit run starts at
 * once, the emulator venv and the Lambda runtime are made beside it (on a fresh clone, about 20 s and one to
 * two minutes), and the integration run starts when the venv is ready: its files that run the functions'
 * bundles come last and wait for the runtime. Integration output streams; unit output is held and printed
 * whole when that run ends, so the two never mix mid-report.
 *
 * With arguments (`npm test -- test/unit/ingestion/manifest.test.ts`) it is `vitest run <arguments>` after both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IamReport } from '../local/iam/report.ts';
import { projectRoot } from '../local/paths.ts';

const bin = (name: string) => join(projectRoot, 'node_modules', '.bin', name);
const color = process.stdout.isTTY ? { FORCE_COLOR: '1' } : {};

function exited(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('error', (error) => {
      process.stderr.write(`npm test: could not start ${child.spawnfile}: ${error.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const children = new Set<ChildProcess>();
// A runner stopped on its own (kill PID, a CI timeout) stops its vitest runs, and with them the emulator.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill(signal);
  });
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** `local/setup.ts` with `flags` (none: the venv and the Lambda runtime); its exit code. */
function setup(...flags: string[]): Promise<number> {
  return exited(
    track(spawn(bin('tsx'), [join('local', 'setup.ts'), ...flags], { cwd: projectRoot, stdio: 'inherit' })),
  );
}

function vitest(
  args: readonly string[],
  stdio: 'inherit' | 'pipe',
  env: Record<string, string> = {},
): ChildProcess {
  return track(
    spawn(bin('vitest'), ['run', ...args], {
      cwd: projectRoot,
      env: { ...process.env, ...color, ...env },
      stdio: ['ignore', stdio, stdio],
    }),
  );
}

/** Forwards a child's output whole lines at a time, so another child's lines never land mid-line. */
function forwardLines(from: NodeJS.ReadableStream, to: NodeJS.WriteStream): void {
  let pending = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const end = chunk.lastIndexOf('\n');
    if (end < 0) {
      pending += chunk;
      return;
    }
    to.write(pending + chunk.slice(0, end + 1));
    pending = chunk.slice(end + 1);
  });
  from.on('end', () => pending && to.write(pending));
}

const seconds = (since: number) => `${Math.round((performance.now() - since) / 1000)} s`;
const verdict = (code: number) => (code === 0 ? 'passed' : `FAILED (exit ${code})`);

async function both(): Promise<number> {
  const started = performance.now();
  const unit = vitest(['--project', 'unit'], 'pipe');
  const held: string[] = [];
  unit.stdout?.setEncoding('utf8').on('data', (chunk: string) => held.push(chunk));
  unit.stderr?.setEncoding('utf8').on('data', (chunk: string) => held.push(chunk));
  let unitTook = '';
  const unitDone = exited(unit).then((code) => {
    unitTook = seconds(started);
    process.stdout.write(
      `\n---- unit project (${unitTook}) ----\n${held.join('')}---- end of unit project ----\n\n`,
    );
    return code;
  });

  // The Lambda runtime's one-time build (its runtime client's native build is over a minute of CPU) runs
  // beside the unit project and the integration files that need only the emulator; the files that run the
  // bundles come last and wait for it (vitest.config.ts, test/support/lambda-runtime.ts).
  const runtimeSetup = setup('--lambda-runtime');
  const setupCode = await setup('--venv');
  let integrationCode = setupCode;
  let integrationTook = '';
  if (setupCode === 0) {
    const reportDir = mkdtempSync(join(tmpdir(), 'inlet-iam-'));
    const report = join(reportDir, 'report.json');
    const integration = vitest(['--project', 'integration'], 'pipe', { INLET_IAM_REPORT: report });
    if (integration.stdout) forwardLines(integration.stdout, process.stdout);
    if (integration.stderr) forwardLines(integration.stderr, process.stderr);
    integrationCode = await exited(integration);
    if (integrationCode === 0) integrationCode = mutationCheck(report);
    rmSync(reportDir, { recursive: true, force: true });
    integrationTook = seconds(started);
  } else {
    for (const child of children) child.kill('SIGTERM');
  }
  const unitCode = await unitDone;
  const runtimeCode = await runtimeSetup;
  const integrationLine = integrationTook
    ? `integration ${verdict(integrationCode)} at ${integrationTook}`
    : 'integration not run (the emulator venv could not be made)';
  const runtimeLine = runtimeCode === 0 ? '' : `; the Lambda runtime could not be made (exit ${runtimeCode})`;
  process.stdout.write(
    `npm test: unit ${verdict(unitCode)} at ${unitTook}, ${integrationLine}${runtimeLine}\n`,
  );
  return unitCode || integrationCode || runtimeCode;
}

/**
 * The IAM mutation check, after the whole integration project: every statement of every role the suite ran
 * was needed by some request (removing it would have failed that test), or is one no local run can use.
 */
function mutationCheck(path: string): number {
  if (!existsSync(path)) {
    process.stdout.write('npm test: no IAM check report (the suite ran against real AWS?)\n');
    return 0;
  }
  const report = JSON.parse(readFileSync(path, 'utf8')) as IamReport & { table: string };
  process.stdout.write(`\n---- IAM check: calls made vs statements granted ----\n${report.table}\n`);
  if (report.unneeded.length === 0) {
    process.stdout.write('IAM mutation check: every statement is needed by a request the suite made\n');
    return 0;
  }
  process.stdout.write(
    `IAM mutation check FAILED: no request needed these statements (test the path that does, or remove them):\n${report.unneeded.map((g) => `  ${g.owner}: ${g.statement}`).join('\n')}\n`,
  );
  return 1;
}

async function main(args: readonly string[]): Promise<number> {
  if (args.length === 0) return both();
  const setupCode = await setup();
  if (setupCode !== 0) return setupCode;
  return exited(vitest(args, 'inherit'));
}

process.exitCode = await main(process.argv.slice(2));

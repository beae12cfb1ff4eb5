// How long a person waits for `npx inlet --help` and `npx inlet status` (local mode), as they type them, and
// for `npm start -- --available-now` on an empty stack.
// Targets: help under 0.5 s, status under 1.5 s. Measured here, not in a timed test: the numbers
// depend on the machine and its load, which the result records next to them.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AwsClients } from '../local/aws/clients.ts';
import { bringUpLocalStack } from '../local/local-stack.ts';
import { localConfigOf } from '../local/state.ts';
import { projectRoot } from '../shared/kernel/project-root.ts';

export interface CliTimings {
  /** `npx inlet --help`, median wall time. */
  readonly helpMs: number;
  /** `npx inlet status` against a local pipeline, median wall time. */
  readonly statusMs: number;
  /**
   * `npm start -- --available-now` on an empty stack (a new one each run: synth, deploy, runner, functions
   * started, quiet, exit), median wall time, the bundle cache warm.
   */
  readonly startMs: number;
  /**
   * The same with the bundle cache off (`INLET_NO_BUNDLE_CACHE=1`): every function bundled by esbuild. Only
   * where asked (the full run): one more whole start, ~20 s, for a figure the cache makes rare.
   */
  readonly startUncachedMs?: number;
  /** The same two without npx (`node cli/bin.mjs`): the CLI's own share. */
  readonly direct: { readonly helpMs: number; readonly statusMs: number };
  /** What npx itself costs before it starts any bin (npx running esbuild's native `--version`). */
  readonly npxOverheadMs: number;
  readonly runs: number;
  /** How many `npm start` runs `startMs` is the median of. */
  readonly starts: number;
  /** 1-minute load average per core when measured: above 1, every figure here waited for a CPU. */
  readonly loadPerCore: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0);
};

function wallMs(command: string, args: string[], env: NodeJS.ProcessEnv): number {
  const begun = performance.now();
  const result = spawnSync(command, args, { cwd: projectRoot, env, encoding: 'utf8', timeout: 300_000 });
  const elapsed = performance.now() - begun;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr.slice(-500)}`);
  return elapsed;
}

/** Brings up a local pipeline on the bench's emulator (as `npm start` would) and times the CLI against it. */
export async function cliTimings(
  clients: AwsClients,
  endpoint: string,
  options: {
    /** Timed runs of each CLI command, after one warm-up run. */
    readonly runs: number;
    /** Timed `npm start -- --available-now` runs with the bundle cache warm (`startMs` is their median). */
    readonly starts: number;
    /** Time one start with the bundle cache off too (`startUncachedMs`), before the others. */
    readonly uncached: boolean;
    readonly log: (line: string) => void;
  },
): Promise<CliTimings> {
  const state = mkdtempSync(join(tmpdir(), 'inlet-bench-cli-'));
  try {
    const stack = await bringUpLocalStack(clients, { 'inlet:stackName': 'InletBenchCli' });
    writeFileSync(join(state, 'local.json'), JSON.stringify(localConfigOf(stack, endpoint, 'us-east-1')));
    const env = { ...process.env, INLET_STATE_DIR: state };
    const bin = join(projectRoot, 'cli', 'bin.mjs');
    const time = (command: string, args: string[]) => {
      wallMs(command, args, env); // warm: tsx's compile cache and the OS file cache, as after a first use
      return median(Array.from({ length: options.runs }, () => wallMs(command, args, env)));
    };
    options.log(`cli: ${options.runs} runs each of --help and status, with and without npx`);
    const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');
    const start = (stack: string, extra: NodeJS.ProcessEnv = {}) =>
      wallMs(
        tsx,
        [
          join(projectRoot, 'cli', 'start.ts'),
          '--endpoint',
          endpoint,
          '--stack-name',
          stack,
          '--available-now',
          '--no-view',
        ],
        { ...env, ...extra },
      );
    options.log(
      `cli: npm start --available-now ${options.uncached ? 'once uncached, then ' : ''}on ${options.starts} empty stacks`,
    );
    // The bundle cache is warm already: bringing up the stack above synthesized with bundling, as a first
    // `npm start` does. An uncached run goes first and warms the rest a first start warms (the OS's file
    // cache, the runtime's binaries); without it, the first timed start does, as after any first use.
    const startUncachedMs = options.uncached
      ? Math.round(start('InletBenchStartUncached', { INLET_NO_BUNDLE_CACHE: '1' }))
      : undefined;
    const starts = Array.from({ length: options.starts }, (_, i) => start(`InletBenchStart${i}`));
    const timings = {
      startMs: median(starts),
      ...(startUncachedMs === undefined ? {} : { startUncachedMs }),
      starts: options.starts,
      helpMs: time('npx', ['inlet', '--help']),
      statusMs: time('npx', ['inlet', 'status']),
      direct: {
        helpMs: time(process.execPath, [bin, '--help']),
        statusMs: time(process.execPath, [bin, 'status']),
      },
      npxOverheadMs: time('npx', ['--no-install', 'esbuild', '--version']),
      runs: options.runs,
      loadPerCore: Math.round(((loadavg()[0] ?? 0) / availableParallelism()) * 100) / 100,
    };
    return timings;
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

// The Lambda runtime local mode runs each function under, installed once into .inlet-cache/lambda/:
// AWS's Runtime Interface Emulator (the Runtime API endpoint, built with `go install` from its Go module) and
// AWS's runtime interface client for Node.js (`aws-lambda-ric`, from npm; it builds a native client at install).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../paths.ts';

/** Raised when the machine lacks what the Lambda runtime needs; the message names the piece and the fix. */
export class LambdaRuntimeSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LambdaRuntimeSetupError';
  }
}

/**
 * The emulator's Go module, pinned. The repository's tags (v1.30, ...) are not semver, so the Go proxy serves
 * it only as this pseudo-version (the module's newest commit the proxy holds); `go install` checks it against
 * the checksum database (sum.golang.org).
 */
export const RIE_MODULE = 'github.com/aws/aws-lambda-runtime-interface-emulator';
export const RIE_VERSION = 'v0.0.0-20261030222936-bef5c4ba774d';

export const lambdaCacheDir = join(projectRoot, '.inlet-cache', 'lambda');
const rieDir = join(lambdaCacheDir, 'rie');
const ricDir = join(lambdaCacheDir, 'ric');
const ricSource = join(projectRoot, 'local', 'lambda', 'ric');

export interface LambdaRuntime {
  /** The aws-lambda-rie binary. */
  readonly rie: string;
  /** aws-lambda-ric's entry point, which the bootstrap starts with node. */
  readonly ric: string;
  /** What Lambda calls LAMBDA_RUNTIME_DIR: where the runtime client lives. */
  readonly runtimeDir: string;
}

const runtime: LambdaRuntime = {
  rie: join(rieDir, 'aws-lambda-rie'),
  ric: join(ricDir, 'node_modules', 'aws-lambda-ric', 'index.mjs'),
  runtimeDir: ricDir,
};

const ricStamp = () =>
  createHash('sha256')
    .update(readFileSync(join(ricSource, 'package-lock.json')))
    .update(process.version)
    .digest('hex');

const stampOf = (dir: string) => join(dir, '.inlet-stamp');
const current = (dir: string, stamp: string, file: string) =>
  existsSync(file) && existsSync(stampOf(dir)) && readFileSync(stampOf(dir), 'utf8').trim() === stamp;

/** Runs a command; on failure the error carries the tail of its output (the whole of it is in `logFile`). */
function run(cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string }) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.once('error', (error) =>
      reject(new LambdaRuntimeSetupError(`could not run ${cmd}: ${error.message}`, { cause: error })),
    );
    child.once('exit', (code) => {
      writeFileSync(options.logFile, output);
      if (code === 0) resolve();
      else
        reject(
          new LambdaRuntimeSetupError(
            `${cmd} ${args.join(' ')} exited ${code}; the last lines (all of it in ${options.logFile}):\n${output.trim().split('\n').slice(-15).join('\n')}`,
          ),
        );
    });
  });
}

/** Serialises two installs of the same piece (two test runs at once) with an atomic mkdir lock. */
async function locked<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  mkdirSync(lambdaCacheDir, { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock older than an install can take was left by a process that died.
      if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true });
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function installRie(log: (line: string) => void): Promise<void> {
  if (current(rieDir, RIE_VERSION, runtime.rie)) return;
  await locked(rieDir, async () => {
    if (current(rieDir, RIE_VERSION, runtime.rie)) return;
    log(
      `[inlet] building the Lambda Runtime Interface Emulator (go install ${RIE_MODULE}, once, about a minute)`,
    );
    rmSync(rieDir, { recursive: true, force: true });
    mkdirSync(rieDir, { recursive: true });
    await run('go', ['install', `${RIE_MODULE}/cmd/aws-lambda-rie@${RIE_VERSION}`], {
      cwd: rieDir,
      env: { ...process.env, GOBIN: rieDir, GOFLAGS: '-buildvcs=false', GO111MODULE: 'on' },
      logFile: join(lambdaCacheDir, 'rie-install.log'),
    }).catch((error: Error) => {
      throw new LambdaRuntimeSetupError(
        /could not run go/.test(error.message)
          ? 'go was not found on PATH: local mode and the integration suite build the Lambda Runtime Interface Emulator with it. Install Go 1.26.6 or later (https://go.dev/dl/), then run again.'
          : `building the Lambda Runtime Interface Emulator failed: ${error.message}`,
        { cause: error },
      );
    });
    writeFileSync(stampOf(rieDir), `${RIE_VERSION}\n`);
  });
}

async function installRic(log: (line: string) => void): Promise<void> {
  const stamp = ricStamp();
  if (current(ricDir, stamp, runtime.ric)) return;
  await locked(ricDir, async () => {
    if (current(ricDir, stamp, runtime.ric)) return;
    log(
      '[inlet] installing the Lambda runtime interface client (aws-lambda-ric, native build, once, 1-2 minutes)',
    );
    rmSync(ricDir, { recursive: true, force: true });
    mkdirSync(ricDir, { recursive: true });
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(join(ricSource, file), join(ricDir, file));
    await run('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: ricDir,
      env: process.env,
      logFile: join(lambdaCacheDir, 'ric-install.log'),
    }).catch((error: Error) => {
      throw new LambdaRuntimeSetupError(
        `installing aws-lambda-ric failed; its install builds curl and aws-lambda-cpp from source, which needs cmake, make, a C/C++ compiler and python3 (Debian: apt-get install cmake build-essential python3): ${error.message}`,
        { cause: error },
      );
    });
    if (!existsSync(runtime.ric))
      throw new LambdaRuntimeSetupError(`aws-lambda-ric installed without ${runtime.ric}`);
    writeFileSync(stampOf(ricDir), `${stamp}\n`);
  });
}

/**
 * Installs (once; again when a pin changes) and returns the Lambda runtime. Both pieces build side by side.
 * @example
 * const { rie, ric } = await ensureLambdaRuntime();
 */
export async function ensureLambdaRuntime(
  log: (line: string) => void = console.error,
): Promise<LambdaRuntime> {
  const results = await Promise.allSettled([installRie(log), installRic(log)]);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length > 0) throw new LambdaRuntimeSetupError(failed.map((e) => e.message).join('\n'));
  return runtime;
}

/** The runtime if it is installed, without installing it (the CLI never builds anything). */
export function installedLambdaRuntime(): LambdaRuntime | undefined {
  return existsSync(runtime.rie) && existsSync(runtime.ric) ? runtime : undefined;
}

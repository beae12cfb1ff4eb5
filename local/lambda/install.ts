// The Lambda runtime local mode runs each function under, installed once into .cache/lambda/:
// AWS's Runtime Interface Emulator (the Runtime API endpoint, built with `go install` from its Go module),
// AWS's runtime interface client for Node.js (`aws-lambda-ric`, from npm; it builds a native client at install)
// and the Node.js of each runtime the template names (npm's per-platform builds of Node.js, pinned).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type InstalledPiece, installOnce } from '../install-once.ts';
import { cacheDir, projectRoot } from '../paths.ts';

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

export const lambdaCacheDir = join(cacheDir, 'lambda');
const source = (name: string) => join(projectRoot, 'local', 'lambda', name);
/** An install left behind by a process that died is older than this; an install takes minutes at most. */
const STALE_LOCK_MS = 15 * 60_000;

/**
 * The Lambda runtimes whose Node.js local mode has: each a folder of local/lambda/ whose lock pins npm's
 * build of that Node.js for each platform (`node-<os>-<cpu>`). A runtime not here runs only if this machine's
 * own node has its major version.
 */
const NODE_RUNTIMES: Readonly<Record<string, string>> = { 'nodejs22.x': 'nodejs22.x' };

export interface LambdaRuntime {
  /** The aws-lambda-rie binary. */
  readonly rie: string;
  /** aws-lambda-ric's entry point, which the bootstrap starts with node. */
  readonly ric: string;
  /** What Lambda calls LAMBDA_RUNTIME_DIR: where the runtime client lives. */
  readonly runtimeDir: string;
  /** The node binary of each runtime installed here (`nodejs22.x` -> its node). */
  readonly nodes: Readonly<Record<string, string>>;
}

const rieDir = join(lambdaCacheDir, 'rie');
const ricDir = join(lambdaCacheDir, 'ric');
const runtimeClientEntry = join('node_modules', 'aws-lambda-ric', 'index.mjs');
/** The user's cache (XDG), shared by every clone of the project on this machine, as Go's and npm's are. */
const machineCacheDir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'inlet', 'lambda');
const nodeBinary = (runtime: string) =>
  join(lambdaCacheDir, runtime, 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node');

const runtime: LambdaRuntime = {
  rie: join(rieDir, 'aws-lambda-rie'),
  ric: join(ricDir, runtimeClientEntry),
  runtimeDir: ricDir,
  nodes: Object.fromEntries(Object.keys(NODE_RUNTIMES).map((id) => [id, nodeBinary(id)])),
};

const hashOf = (...parts: Array<string | Buffer>) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

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
      mkdirSync(lambdaCacheDir, { recursive: true });
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

/** A folder installed from a package.json and lock of local/lambda/ by `npm ci`. */
async function npmInstall(name: string, dir: string, flags: string[], onError: (error: Error) => Error) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json'])
    copyFileSync(join(source(name), file), join(dir, file));
  await run('npm', ['ci', '--no-audit', '--no-fund', ...flags], {
    cwd: dir,
    env: process.env,
    logFile: join(lambdaCacheDir, `${name}-install.log`),
  }).catch((error: Error) => {
    throw onError(error);
  });
}

function installRie(log: (line: string) => void): Promise<void> {
  const piece: InstalledPiece = {
    dir: rieDir,
    file: runtime.rie,
    stampFile: join(rieDir, '.inlet-stamp'),
    stamp: RIE_VERSION,
  };
  return installOnce(
    piece,
    async () => {
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
    },
    STALE_LOCK_MS,
  );
}

function installRic(log: (line: string) => void): Promise<void> {
  const piece: InstalledPiece = {
    dir: ricDir,
    file: runtime.ric,
    stampFile: join(ricDir, '.inlet-stamp'),
    // The native client is built against this node (its N-API is stable across versions, its toolchain not).
    stamp: hashOf(readFileSync(join(source('ric'), 'package-lock.json')), process.version),
  };
  // Built once per machine: another clone (CI's fresh one, a second worktree) copies it from the user's cache
  // instead of building it again. Its folder can move: the native client links curl and aws-lambda-cpp
  // statically and node_modules/.bin links are relative.
  const shared = join(machineCacheDir, `ric-${piece.stamp.slice(0, 16)}-${process.platform}-${process.arch}`);
  return installOnce(
    piece,
    async () => {
      if (existsSync(join(shared, runtimeClientEntry))) {
        rmSync(ricDir, { recursive: true, force: true });
        cpSync(shared, ricDir, { recursive: true, verbatimSymlinks: true });
        return;
      }
      log(
        '[inlet] installing the Lambda runtime interface client (aws-lambda-ric, native build, once, 1-2 minutes)',
      );
      await npmInstall(
        'ric',
        ricDir,
        [],
        (error) =>
          new LambdaRuntimeSetupError(
            `installing aws-lambda-ric failed; its install builds curl and aws-lambda-cpp from source, which needs cmake, make, a C/C++ compiler and python3 (Debian: apt-get install cmake build-essential python3): ${error.message}`,
            { cause: error },
          ),
      );
      if (!existsSync(runtime.ric))
        throw new LambdaRuntimeSetupError(`aws-lambda-ric installed without ${runtime.ric}`);
      // Under a temporary name first, so another clone never copies half of it.
      const building = `${shared}.${process.pid}.tmp`;
      try {
        mkdirSync(machineCacheDir, { recursive: true });
        cpSync(ricDir, building, { recursive: true, verbatimSymlinks: true });
        renameSync(building, shared);
      } catch {
        rmSync(building, { recursive: true, force: true });
      }
    },
    STALE_LOCK_MS,
  );
}

/** A runtime's Node.js: one prebuilt binary from npm (tens of MB), no build. */
function installNode(id: string, log: (line: string) => void): Promise<void> {
  const dir = join(lambdaCacheDir, id);
  const piece: InstalledPiece = {
    dir,
    // npm skips every platform's package but this machine's: none on a platform npm has no Node.js build for.
    file: join(dir, 'node_modules', '.package-lock.json'),
    stampFile: join(dir, '.inlet-stamp'),
    stamp: hashOf(readFileSync(join(source(id), 'package-lock.json'))),
  };
  return installOnce(
    piece,
    async () => {
      log(`[inlet] installing the Node.js of the ${id} runtime (from npm, once)`);
      // Its own folder, apart from the runtime client's: a `node` on the PATH of that install's build scripts
      // would build the native client against another Node.js.
      await npmInstall(
        id,
        dir,
        ['--ignore-scripts'],
        (error) =>
          new LambdaRuntimeSetupError(`installing the Node.js of ${id} failed: ${error.message}`, {
            cause: error,
          }),
      );
    },
    STALE_LOCK_MS,
  );
}

/**
 * Installs (once; again when a pin changes) and returns the Lambda runtime. The pieces install side by side.
 * @example
 * const { rie, ric } = await ensureLambdaRuntime();
 */
export async function ensureLambdaRuntime(
  log: (line: string) => void = console.error,
): Promise<LambdaRuntime> {
  const results = await Promise.allSettled([
    installRie(log),
    installRic(log),
    ...Object.keys(NODE_RUNTIMES).map((id) => installNode(id, log)),
  ]);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length > 0) throw new LambdaRuntimeSetupError(failed.map((e) => e.message).join('\n'));
  return runtime;
}

/**
 * The node binary a function of this runtime (the template's `Runtime`) runs with: the pinned Node.js of that
 * runtime, or this machine's node when its major version is the runtime's. Any other runtime is refused, as
 * Lambda refuses a runtime it does not have, rather than run on a Node.js the function was not built for.
 */
export function nodeFor(lambda: LambdaRuntime, runtimeId: string): string {
  const pinned = lambda.nodes[runtimeId];
  if (pinned && existsSync(pinned)) return pinned;
  const major = /^nodejs(\d+)\.x$/.exec(runtimeId)?.[1];
  if (major && process.versions.node.split('.')[0] === major) return process.execPath;
  const have = [
    ...Object.keys(lambda.nodes).filter((id) => existsSync(lambda.nodes[id] ?? '')),
    `nodejs${process.versions.node.split('.')[0]}.x (this machine's node)`,
  ];
  throw new LambdaRuntimeSetupError(
    pinned
      ? `the Node.js of ${runtimeId} is not installed for ${process.platform}-${process.arch}: run \`npx tsx local/setup.ts\` (npm has builds for Linux x64 and arm64)`
      : `local mode has no Node.js for the runtime ${runtimeId}; it runs ${have.join(', ')}: pin one in local/lambda/ (see local/lambda/nodejs22.x) or use one of these runtimes`,
  );
}

import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { motoLauncher, projectRoot } from './paths.ts';
import { EmulatorSetupError, ensureVenv } from './venv.ts';

/** A running local AWS emulator (moto server) owned by this process. */
export interface Emulator {
  readonly endpoint: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface StartEmulatorOptions {
  /** @default 0, a free port chosen by the OS */
  readonly port?: number;
  /** @default 60_000 */
  readonly readyTimeoutMs?: number;
  /** Where moto's own request log goes. @default 'ignore' */
  readonly stderr?: 'inherit' | 'ignore';
  /** Keep running after this process exits (local mode's background emulator). @default false */
  readonly detached?: boolean;
  /** With `detached`: where its output goes. */
  readonly logFile?: string;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last line of defence; the launcher also exits on its own when this process dies.
  process.on('exit', () => {
    for (const child of running) child.kill('SIGTERM');
  });
}

async function waitUntilAnswering(endpoint: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (await emulatorAnswers(endpoint)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new EmulatorSetupError(`moto server at ${endpoint} did not answer in time`);
}

function firstLineOfPipe(child: ChildProcess, deadline: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(
      () => reject(new EmulatorSetupError('moto server did not start in time')),
      deadline - Date.now(),
    );
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new EmulatorSetupError(`moto server exited with code ${code} before it was ready`));
    });
  });
}

async function firstLineOfFile(path: string, child: ChildProcess, deadline: number): Promise<string> {
  while (Date.now() < deadline) {
    const line = readFileSync(path, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('{'));
    if (line) return line;
    if (child.exitCode !== null)
      throw new EmulatorSetupError(`moto server exited with code ${child.exitCode}; see ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new EmulatorSetupError(`moto server did not start in time; see ${path}`);
}

/**
 * Installs (once) and starts moto server on 127.0.0.1, waits until it answers HTTP.
 * @example
 * const emulator = await startEmulator();
 * try { ... clients for emulator.endpoint ... } finally { await emulator.stop(); }
 */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<Emulator> {
  const python = await ensureVenv();
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  // A background emulator writes to a log file: a pipe would close with this process, and moto's later
  // writes to it would then fail inside its request threads.
  const logPath = options.logFile ?? '';
  const logFd = options.detached ? openSync(logPath, 'w') : undefined;
  const child = spawn(
    python,
    [motoLauncher, String(options.port ?? 0), ...(options.detached ? ['--detach'] : [])],
    {
      cwd: projectRoot,
      stdio: options.detached ? ['ignore', logFd, logFd] : ['ignore', 'pipe', options.stderr ?? 'ignore'],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      detached: options.detached ?? false,
    },
  );
  if (logFd !== undefined) closeSync(logFd);
  if (!options.detached) {
    running.add(child);
    installExitHook();
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => running.delete(child));

  const firstLine = options.detached
    ? await firstLineOfFile(logPath, child, deadline)
    : await firstLineOfPipe(child, deadline);
  const { host, port } = JSON.parse(firstLine) as { host: string; port: number };
  const endpoint = `http://${host}:${port}`;
  await waitUntilAnswering(endpoint, deadline);
  if (options.detached) child.unref();

  return {
    endpoint,
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}

/** True when an emulator answers at this endpoint. */
export async function emulatorAnswers(endpoint: string): Promise<boolean> {
  try {
    // GET is a no-op there (only POST resets anything): a cheap liveness probe.
    const response = await fetch(`${endpoint}/moto-api/reset-auth`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

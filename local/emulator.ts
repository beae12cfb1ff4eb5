import { type ChildProcess, spawn } from 'node:child_process';
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
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'GET' });
      await response.body?.cancel();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new EmulatorSetupError(`moto server at ${endpoint} did not answer in time`, { cause: lastError });
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
  const child = spawn(python, [motoLauncher, String(options.port ?? 0)], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', options.stderr ?? 'ignore'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  running.add(child);
  installExitHook();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => running.delete(child));

  const firstLine = await new Promise<string>((resolve, reject) => {
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
  const { host, port } = JSON.parse(firstLine) as { host: string; port: number };
  const endpoint = `http://${host}:${port}`;
  await waitUntilAnswering(endpoint, deadline);

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

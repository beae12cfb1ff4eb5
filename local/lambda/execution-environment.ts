import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { FunctionErrorDocument, LambdaInvokeResult } from '../lambda-invoker.ts';
import { projectRoot } from '../paths.ts';
import type { LambdaRuntime } from './install.ts';

const bootstrap = join(projectRoot, 'local', 'lambda', 'bootstrap');

/**
 * Runs the emulator as the child of a small shell in a process group of its own: the host stops the whole
 * group (shell, emulator, the function's node), and the shell stops it too when the host process dies, even by
 * SIGKILL, so no function outlives the `npm start` or test run that started it.
 */
const WATCHDOG = [
  'parent=$1; shift',
  '"$@" & child=$!',
  "trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT",
  'while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done',
  'kill -TERM "$child" 2>/dev/null; wait "$child"',
].join('\n');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const failed = (document: FunctionErrorDocument): LambdaInvokeResult => ({
  payload: document,
  functionError: 'Unhandled',
});

/** The Runtime Interface Emulator's answer, read as Lambda's Invoke API would report it. */
export function invocationOf(status: number, body: string, requestId: string): LambdaInvokeResult {
  // The emulator answers a timeout with this text (and status 200); Lambda reports it as Sandbox.Timedout.
  const timedOut = /^Task timed out after ([\d.]+) seconds$/.exec(body.trim());
  if (timedOut)
    return failed({
      errorType: 'Sandbox.Timedout',
      errorMessage: `RequestId: ${requestId} Error: ${body.trim()}`,
    });
  let parsed: unknown = null;
  try {
    parsed = body.length === 0 ? null : JSON.parse(body);
  } catch {
    return failed({ errorType: 'Runtime.InvalidResponse', errorMessage: body.slice(0, 500) });
  }
  // The emulator drops the X-Amz-Function-Error header Lambda sets: a function error is told by its shape,
  // the runtime client's {errorType, errorMessage, trace}. (A handler returning exactly that shape would be
  // taken for an error; none of ours does.)
  const error = parsed as Partial<FunctionErrorDocument> | null;
  const isError =
    typeof error?.errorType === 'string' &&
    typeof error.errorMessage === 'string' &&
    Object.keys(error).every((k) => ['errorType', 'errorMessage', 'trace', 'stackTrace'].includes(k));
  if (isError) return failed(error as FunctionErrorDocument);
  if (status !== 200)
    return failed({ errorType: 'Runtime.Unknown', errorMessage: `status ${status}: ${body.slice(0, 500)}` });
  return { payload: parsed };
}

/**
 * One execution environment: the Runtime Interface Emulator serving the Runtime API to one node process that
 * runs the function's bundle through aws-lambda-ric. Like Lambda's, it initialises on its first invocation,
 * is reused by the next ones, runs one invocation at a time, is stopped at the function's timeout (the
 * emulator kills the runtime and starts a fresh one on the next invocation) and after its process dies.
 */
export class ExecutionEnvironment {
  private child?: ChildProcess;
  private port = 0;
  private exited?: Promise<void>;

  constructor(
    private readonly options: {
      readonly runtime: LambdaRuntime;
      /** The bundle directory: the function's working directory, as /var/task is on Lambda. */
      readonly codeDir: string;
      readonly env: Record<string, string>;
      readonly timeoutSeconds: number;
      readonly onLine: (line: string) => void;
    },
  ) {}

  async start(): Promise<void> {
    const [runtimeApi, invokeApi] = [await freePort(), await freePort()];
    this.port = invokeApi;
    const child = spawn(
      'sh',
      [
        '-c',
        WATCHDOG,
        'inlet-lambda',
        String(process.pid),
        this.options.runtime.rie,
        '--log-level',
        'error',
        '--runtime-api-address',
        `127.0.0.1:${runtimeApi}`,
        '--runtime-interface-emulator-address',
        `127.0.0.1:${invokeApi}`,
        bootstrap,
      ],
      { cwd: this.options.codeDir, env: this.options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    for (const stream of [child.stdout, child.stderr])
      if (stream) createInterface({ input: stream }).on('line', this.options.onLine);
    const deadline = Date.now() + 10_000;
    while (!(await answers(invokeApi))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `the Lambda Runtime Interface Emulator exited (${child.exitCode ?? child.signalCode})`,
        );
      if (Date.now() > deadline)
        throw new Error('the Lambda Runtime Interface Emulator did not answer in 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** One invocation (RequestResponse). The emulator enforces the timeout; this waits a while longer at most. */
  invoke(payload: unknown): Promise<LambdaInvokeResult> {
    const requestId = randomUUID();
    const body = JSON.stringify(payload ?? null);
    return new Promise((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: 'POST',
          path: '/2015-03-31/functions/function/invocations',
          headers: { 'content-type': 'application/json', 'x-amzn-requestid': requestId },
          timeout: (this.options.timeoutSeconds + 30) * 1000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve(invocationOf(res.statusCode ?? 0, text, requestId)));
        },
      );
      const fail = (errorMessage: string) => resolve(failed({ errorType: 'Runtime.Unknown', errorMessage }));
      req.on('timeout', () => {
        req.destroy();
        void this.stop();
        fail(
          `no answer from the execution environment ${this.options.timeoutSeconds + 30} s into the invocation`,
        );
      });
      req.on('error', (error) => fail(`the execution environment failed: ${error.message}`));
      req.end(body);
    });
  }

  /** Stops the emulator and the function's process (the whole process group). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.alive) return;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), name);
      } catch {
        // Already gone.
      }
    };
    signal('SIGTERM');
    const killed = setTimeout(() => signal('SIGKILL'), 3_000);
    await this.exited;
    clearTimeout(killed);
  }
}

// How local mode starts a function process: its environment (exactly the function's own variables plus what
// Lambda defines) and the bootstrap that sizes the V8 heap from the memory setting, as Lambda's Node.js
// runtime does. The bootstrap runs here with a stand-in for node that prints what it was given.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { functionAccess } from '../../../../local/lambda/access.ts';
import { type FunctionSpec, functionEnvironment } from '../../../../local/lambda/environment.ts';
import { invocationOf } from '../../../../local/lambda/execution-environment.ts';
import { projectRoot } from '../../../../local/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'inlet-bootstrap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fakeNode22 = join(dir, 'node22', 'bin', 'node');
mkdirSync(dirname(fakeNode22), { recursive: true });
writeFileSync(fakeNode22, '');
const runtime = {
  rie: '/rie',
  ric: '/ric/index.mjs',
  runtimeDir: '/ric',
  nodes: { 'nodejs22.x': fakeNode22 },
};
const spec: FunctionSpec = {
  logicalId: 'InletFunctionsBatcherE6F1A784',
  functionName: 'Inlet-Batcher-1',
  roleArn: 'arn:aws:iam::123456789012:role/batcher',
  role: 'Batcher',
  handler: 'index.handler',
  runtime: 'nodejs22.x',
  memorySize: 1024,
  timeoutSeconds: 30,
  environment: { INLET_LEDGER_TABLE: 'ledger', PATH: '/custom/bin' },
  logGroup: '/aws/lambda/Inlet-Batcher-1',
  codeDir: '/code/asset.abc',
};

/** The bootstrap with `env`, node replaced by a script printing its arguments, then its environment. */
function bootstrap(env: Record<string, string>): { args: string[]; env: Record<string, string> } {
  const fakeNode = join(dir, 'node');
  writeFileSync(fakeNode, '#!/bin/sh\nfor a in "$@"; do echo "ARG $a"; done\nenv\n');
  chmodSync(fakeNode, 0o755);
  const result = spawnSync(join(projectRoot, 'local', 'lambda', 'bootstrap'), [], {
    env: { PATH: '/usr/bin:/bin', ...env, INLET_LAMBDA_NODE: fakeNode },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  const lines = result.stdout.trim().split('\n');
  return {
    args: lines.filter((l) => l.startsWith('ARG ')).map((l) => l.slice(4)),
    env: Object.fromEntries(
      lines.filter((l) => !l.startsWith('ARG ') && l.includes('=')).map((l) => l.split(/=(.*)/s).slice(0, 2)),
    ),
  };
}

describe('a function process', () => {
  it("has the function's own variables and Lambda's, and no variable of the host", () => {
    const env = functionEnvironment(
      spec,
      functionAccess('http://127.0.0.1:5000')(spec),
      runtime,
      'eu-west-1',
    );
    expect(env).toMatchObject({
      INLET_LEDGER_TABLE: 'ledger',
      // An unreserved variable the function sets wins over Lambda's default.
      PATH: '/custom/bin',
      _HANDLER: 'index.handler',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_LAMBDA_FUNCTION_NAME: 'Inlet-Batcher-1',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/Inlet-Batcher-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_SESSION_TOKEN: 'local',
      LAMBDA_TASK_ROOT: '/code/asset.abc',
      LAMBDA_RUNTIME_DIR: '/ric',
      TZ: ':UTC',
      INLET_AWS_ENDPOINT: 'http://127.0.0.1:5000',
    });
    const defined = [
      ...['_HANDLER', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
      ...[
        'AWS_SESSION_TOKEN',
        'LAMBDA_TASK_ROOT',
        'LAMBDA_RUNTIME_DIR',
        'TZ',
        'LANG',
        'PATH',
        'LD_LIBRARY_PATH',
      ],
      ...['AWS_XRAY_CONTEXT_MISSING', 'INLET_AWS_ENDPOINT'],
    ];
    const launchOnly = [
      'AWS_LAMBDA_FUNCTION_TIMEOUT',
      'INLET_LAMBDA_NODE',
      'INLET_LAMBDA_RIC',
      'INLET_LAMBDA_EXECUTION_ENV',
    ];
    const unexplained = Object.keys(env).filter(
      (k) =>
        !(k in spec.environment) &&
        !defined.includes(k) &&
        !launchOnly.includes(k) &&
        !k.startsWith('AWS_LAMBDA_'),
    );
    expect(unexplained).toEqual([]);
    expect(env.HOME).toBeUndefined();
  });

  it("calls AWS through the IAM check with its role's credentials when the check is on", () => {
    const iam = {
      endpoint: 'http://127.0.0.1:6000',
      credentials: {
        Batcher: { accessKeyId: 'ASIAINLET0001BATCHER', secretAccessKey: 'inlet-iam-check' },
        Committer: { accessKeyId: 'ASIAINLET0001COMMITTER', secretAccessKey: 'inlet-iam-check' },
      },
    };
    const env = functionEnvironment(
      spec,
      functionAccess('http://127.0.0.1:5000', iam)(spec),
      runtime,
      'eu-west-1',
    );
    expect(env).toMatchObject({
      INLET_AWS_ENDPOINT: 'http://127.0.0.1:6000',
      AWS_ACCESS_KEY_ID: 'ASIAINLET0001BATCHER',
      AWS_SECRET_ACCESS_KEY: 'inlet-iam-check',
    });
    // A function whose role the check does not know is not let through unchecked.
    expect(() => functionAccess('http://127.0.0.1:5000', iam)({ ...spec, role: 'Sink' })).toThrow(
      /no role Sink for function InletFunctionsBatcherE6F1A784; it has Batcher, Committer/,
    );
  });

  it("runs on its runtime's Node.js, not on the host's, and a runtime without one is refused", () => {
    const env = functionEnvironment(spec, functionAccess('')(spec), runtime, 'eu-west-1');
    expect(env.INLET_LAMBDA_NODE).toBe(fakeNode22);
    expect(env.INLET_LAMBDA_EXECUTION_ENV).toBe('AWS_Lambda_nodejs22.x');
    const lambdaDefault = functionEnvironment(
      { ...spec, environment: {} },
      functionAccess('')(spec),
      runtime,
      'eu-west-1',
    );
    expect(lambdaDefault.PATH?.split(':')[0]).toBe(dirname(fakeNode22));
    // The host's own major is served by the host's node; one that is neither is refused with what there is.
    const hostMajor = `nodejs${process.versions.node.split('.')[0]}.x`;
    const noPins = { ...runtime, nodes: {} };
    expect(
      functionEnvironment({ ...spec, runtime: hostMajor }, functionAccess('')(spec), noPins, 'x'),
    ).toMatchObject({ INLET_LAMBDA_NODE: process.execPath });
    expect(() =>
      functionEnvironment({ ...spec, runtime: 'nodejs8.10' }, functionAccess('')(spec), runtime, 'x'),
    ).toThrow(/no Node\.js for the runtime nodejs8\.10; it runs nodejs22\.x/);
  });

  it("gets the V8 heap Lambda's Node.js bootstrap sizes from the memory setting", () => {
    const { args } = bootstrap({
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
      INLET_LAMBDA_RIC: '/ric/index.mjs',
    });
    // New space a tenth of 1024 MB (102), in three semi-spaces (34); old space the rest (922).
    expect(args).toEqual([
      '--expose-gc',
      '--max-http-header-size',
      '81920',
      '--max-semi-space-size=34',
      '--max-old-space-size=922',
      '/ric/index.mjs',
    ]);
    const small = bootstrap({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256', INLET_LAMBDA_RIC: '/ric/index.mjs' });
    expect(small.args).toContain('--max-old-space-size=231');
  });

  it('leaves the heap to NODE_OPTIONS when the function sets it there, as Lambda does', () => {
    const { args } = bootstrap({
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
      NODE_OPTIONS: '--max-old-space-size=300',
      INLET_LAMBDA_RIC: '/ric/index.mjs',
    });
    expect(
      args.some((a) => a.startsWith('--max-old-space-size') || a.startsWith('--max-semi-space-size')),
    ).toBe(false);
  });

  it("starts node without the launch-only variables, with the runtime's AWS_EXECUTION_ENV", () => {
    const { env } = bootstrap({
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '128',
      AWS_LAMBDA_FUNCTION_TIMEOUT: '30',
      INLET_LAMBDA_RIC: '/ric/index.mjs',
      INLET_LAMBDA_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      LAMBDA_RUNTIME_DIR: '/ric',
      LAMBDA_TASK_ROOT: '/code',
    });
    expect(env.AWS_EXECUTION_ENV).toBe('AWS_Lambda_nodejs22.x');
    expect(env.NODE_PATH).toBe('/ric/node_modules:/ric:/code');
    for (const name of [
      'AWS_LAMBDA_FUNCTION_TIMEOUT',
      'INLET_LAMBDA_NODE',
      'INLET_LAMBDA_RIC',
      'INLET_LAMBDA_EXECUTION_ENV',
    ])
      expect(env[name]).toBeUndefined();
  });
});

describe("the Runtime Interface Emulator's answers, as Lambda's Invoke API reports them", () => {
  it('a result, a function error, a timeout and a dead process', () => {
    expect(invocationOf(200, '{"batchItemFailures":[]}', 'r1')).toEqual({
      payload: { batchItemFailures: [] },
    });
    expect(invocationOf(200, 'null', 'r1')).toEqual({ payload: null });
    expect(invocationOf(200, '{"errorType":"ConfigError","errorMessage":"bad","trace":["x"]}', 'r1')).toEqual(
      {
        payload: { errorType: 'ConfigError', errorMessage: 'bad', trace: ['x'] },
        functionError: 'Unhandled',
      },
    );
    expect(invocationOf(200, 'Task timed out after 5.00 seconds', 'r1')).toEqual({
      payload: {
        errorType: 'Sandbox.Timedout',
        errorMessage: 'RequestId: r1 Error: Task timed out after 5.00 seconds',
      },
      functionError: 'Unhandled',
    });
    expect(
      invocationOf(502, '{"errorType":"Runtime.ExitError","errorMessage":"exit status 3"}', 'r1'),
    ).toMatchObject({ payload: { errorType: 'Runtime.ExitError' }, functionError: 'Unhandled' });
  });
});

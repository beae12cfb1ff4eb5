import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { ENV } from '../../shared/kernel/names.ts';
import { functionEnv } from '../iam/client.ts';
import type { FunctionAccess } from './access.ts';
import { type LambdaRuntime, nodeFor } from './install.ts';

/** What the host knows of a function: its deployed configuration and where its bundle is. */
export interface FunctionSpec {
  readonly logicalId: string;
  readonly functionName: string;
  readonly roleArn: string;
  /** Whose role it is, as the IAM check registers roles (local/iam/policies.ts). */
  readonly role: string;
  /** The template's `Handler`, e.g. `index.handler`. */
  readonly handler: string;
  /** The template's `Runtime`, e.g. `nodejs22.x`. */
  readonly runtime: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** The template's `Environment.Variables`, references resolved to the deployed resources. */
  readonly environment: Readonly<Record<string, string>>;
  /** The log group the template names (`LoggingConfig.LogGroup`), else Lambda's default. */
  readonly logGroup: string;
  /** The bundle directory `cdk synth` made (what `cdk deploy` zips and uploads). */
  readonly codeDir: string;
}

/**
 * The process environment of one execution environment: the function's own variables, exactly, plus what
 * Lambda defines for every function (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html,
 * "Defined runtime environment variables"), plus INLET_AWS_ENDPOINT, the one local-only variable (it points the
 * functions' SDK clients at the emulator). The SDK's own AWS_ENDPOINT_URL cannot replace it: with an endpoint
 * from the environment the SQS client sends each request to its QueueUrl's host (its queue-URL middleware
 * keeps the configured endpoint only when the client was constructed with one), and the emulator's
 * CloudFormation gives queues `https://sqs.<region>.amazonaws.com/...` URLs, as AWS does. Unreserved ones (PATH, LANG, NODE_PATH, LD_LIBRARY_PATH) yield to the function's own,
 * as on Lambda; reserved ones cannot be set by a function, so theirs win. The Runtime Interface Emulator adds
 * AWS_LAMBDA_RUNTIME_API; the bootstrap adds AWS_EXECUTION_ENV and removes the launch-only variables below.
 */
export function functionEnvironment(
  fn: FunctionSpec,
  access: FunctionAccess,
  runtime: LambdaRuntime,
  region: string,
): Record<string, string> {
  // The runtime's Node.js (nodejs22.x: Node 22), first on PATH as /var/lang/bin is on Lambda.
  const node = nodeFor(runtime, fn.runtime);
  const unreserved = {
    PATH: `${dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
    LANG: 'en_US.UTF-8',
    LD_LIBRARY_PATH: `/lib64:/usr/lib64:${runtime.runtimeDir}:${runtime.runtimeDir}/lib:${fn.codeDir}:${fn.codeDir}/lib`,
    AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
  };
  const reserved = {
    _HANDLER: fn.handler,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: fn.logGroup,
    AWS_LAMBDA_LOG_STREAM_NAME: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`,
    // Lambda gives a role's temporary credentials; without the IAM check, the emulator's fixed key.
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_SESSION_TOKEN: 'local',
    LAMBDA_TASK_ROOT: fn.codeDir,
    LAMBDA_RUNTIME_DIR: runtime.runtimeDir,
    TZ: ':UTC',
  };
  const local = { [ENV.awsEndpoint]: access.endpoint };
  // Read by the Runtime Interface Emulator and the bootstrap, removed before node starts (local/lambda/bootstrap).
  const launch = {
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeoutSeconds),
    INLET_LAMBDA_NODE: node,
    INLET_LAMBDA_RIC: runtime.ric,
    INLET_LAMBDA_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
  };
  // The role's credentials and the IAM check's proxy, when it is on: set in its one place.
  return functionEnv(
    { ...unreserved, ...fn.environment, ...reserved, ...local, ...launch },
    access.endpoint,
    access.credentials,
  );
}

/**
 * How local mode and the tests use the IAM check proxy, in or out of its process: register a bound stack
 * (each function gets its credentials), authorize a call a service makes itself (Step Functions invoking
 * the backfill function), read the denials. And the one place a function's environment is pointed at the
 * proxy with its role's credentials: `functionEnv` (local mode's Lambda host starts each function process
 * with this environment).
 */
import { ENV } from '../../shared/kernel/names.ts';
import type { AuthzRequest } from './evaluator.ts';
import type { BoundStack } from './policies.ts';
import { CONTROL_PREFIX, type Credentials, type DecisionRecord } from './proxy.ts';

export type { Credentials, DecisionRecord };

/** What local mode gives whatever calls AWS as a role: the proxy's endpoint and each role's credentials. */
export interface IamAccess {
  readonly endpoint: string;
  /** By role owner, as registered: `Batcher`, `Backfill`, `Sink`, `StateMachine`... */
  readonly credentials: Readonly<Record<string, Credentials>>;
}

export class IamCheckClient {
  constructor(readonly endpoint: string) {}

  private async call<T>(path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.endpoint}${CONTROL_PREFIX}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`IAM check ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** Each role of the stack gets its access key id: `{ Batcher: {...}, Committer: {...}, ... }`. */
  register(label: string, stack: BoundStack, options: { expectDenials?: boolean } = {}) {
    return this.call<Record<string, Credentials>>('register', { label, stack, ...options });
  }

  /**
   * A call a service makes with a role (no HTTP request reaches the proxy): allowed, or the denial and the
   * message AWS would answer it with.
   */
  authorize(credentials: Credentials, operation: string, authz: readonly AuthzRequest[]) {
    return this.call<{ allowed: boolean; denied?: DecisionRecord; message?: string }>('authorize', {
      accessKeyId: credentials.accessKeyId,
      operation,
      authz,
    });
  }

  /** Denials up to record `seq` were made on purpose: the check after each test no longer counts them. */
  async acknowledge(seq: number): Promise<void> {
    await this.call('acknowledge', { seq });
  }

  /** Denials after `after` (a fixture's expected ones only when asked), and the last record's number. */
  denials(after = 0, options: { expected?: boolean } = {}) {
    return this.call<{ last: number; denials: DecisionRecord[] }>(
      `denials?after=${after}${options.expected ? '&expected=1' : ''}`,
    );
  }
}

/** A function's environment, its AWS calls sent through the IAM check as its role. */
export function functionEnv(
  env: Readonly<Record<string, string | undefined>>,
  proxyEndpoint: string,
  credentials: Credentials | undefined,
): Record<string, string> {
  const defined = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  if (!credentials) return defined;
  return {
    ...defined,
    [ENV.awsEndpoint]: proxyEndpoint,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
}

/** One line per denial: what a test failure says. */
export function describeDenials(denials: readonly DecisionRecord[]): string {
  return denials
    .map(
      (d) =>
        `${d.caller} (role ${d.role}, stack ${d.stack}) may not ${d.action} on ${d.resource}` +
        `${Object.keys(d.context).length > 0 ? ` with ${JSON.stringify(d.context)}` : ''}: ${d.result}` +
        `${d.reason ? ` (${d.reason})` : ''} [${d.operation}]`,
    )
    .join('\n');
}

import type { Credentials, IamAccess } from '../iam/client.ts';

/**
 * How a function process reaches AWS in local mode: the endpoint its SDK clients use (INLET_AWS_ENDPOINT)
 * and the credentials Lambda would give it from its role. With the IAM check on, those are the role's as the
 * check registered them, and the endpoint is the check's proxy, so every call the bundle makes is evaluated
 * against its role; without them, the fixed test key, straight to the emulator.
 */
export interface FunctionAccess {
  readonly endpoint: string;
  readonly credentials?: Credentials;
}

/** The function asking: its logical id, deployed name, execution role, and that role's owner in the check. */
export interface FunctionIdentity {
  readonly logicalId: string;
  readonly functionName: string;
  readonly roleArn: string;
  /** Whose role it is, as the IAM check registers roles: `Batcher`, `Sink`... (local/iam/policies.ts). */
  readonly role: string;
}

export type AccessPolicy = (fn: FunctionIdentity) => FunctionAccess;

/**
 * Each function through the IAM check as its role when `iam` is given, else straight to `endpoint`. A
 * function whose role the check does not know is refused rather than let through unchecked.
 */
export function functionAccess(endpoint: string, iam?: IamAccess): AccessPolicy {
  return (fn) => {
    if (!iam) return { endpoint };
    const credentials = iam.credentials[fn.role];
    if (!credentials)
      throw new Error(
        `the IAM check has no role ${fn.role} for function ${fn.logicalId}; it has ${Object.keys(iam.credentials).join(', ')}`,
      );
    return { endpoint: iam.endpoint, credentials };
  };
}

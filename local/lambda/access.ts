/**
 * How each function process reaches AWS in local mode: the endpoint its SDK clients use and the credentials
 * Lambda would give it from its role. The one place to change both: a proxy that checks every call against
 * the calling function's role (issue 21) gives each function its own key and its own URL here.
 */
export interface FunctionAccess {
  /** Given as INLET_AWS_ENDPOINT, which the functions' clients are built with (local/lambda/environment.ts). */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
}

/** The function asking: its logical id in the template, its deployed name and its execution role's ARN. */
export interface FunctionIdentity {
  readonly logicalId: string;
  readonly functionName: string;
  readonly roleArn: string;
}

export type AccessPolicy = (fn: FunctionIdentity) => FunctionAccess;

/**
 * Every function straight to the emulator, with dummy credentials (moto checks none). Lambda always gives
 * temporary credentials, so a session token too.
 */
export function emulatorAccess(endpoint: string): AccessPolicy {
  return () => ({ endpoint, accessKeyId: 'test', secretAccessKey: 'test', sessionToken: 'local' });
}

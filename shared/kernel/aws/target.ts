import { ENV } from '../names.ts';

/**
 * Where the AWS SDK clients point. One switch for the whole project so the same code and the same
 * integration suite run against moto, LocalStack or a real account.
 *
 * - `INLET_AWS_ENDPOINT=http://127.0.0.1:4566` (LocalStack, or a moto server already running): emulator target.
 * - `INLET_AWS_TARGET=aws`: real AWS with the normal credential chain and region.
 * - neither: the caller decides (tests start their own moto server; Lambda uses real AWS).
 */
export type AwsTarget =
  | {
      readonly kind: 'emulator';
      readonly endpoint: string;
      readonly region: string;
      /** Whose requests these are: local mode's IAM check tells functions apart by access key id. */
      readonly credentials?: EmulatorCredentials;
    }
  | { readonly kind: 'aws'; readonly region?: string };

export interface EmulatorCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export const LOCALSTACK_ENDPOINT = 'http://localhost:4566';
export const DEFAULT_EMULATOR_REGION = 'us-east-1';

export function emulatorTarget(
  endpoint: string,
  region = DEFAULT_EMULATOR_REGION,
  credentials?: EmulatorCredentials,
): AwsTarget {
  return credentials
    ? { kind: 'emulator', endpoint, region, credentials }
    : { kind: 'emulator', endpoint, region };
}

/**
 * The standard credential variables, as Lambda sets them for a function's role: against an emulator they say
 * which function is calling (the IAM check maps each access key id to a role), instead of the fixed `test`.
 */
function credentialsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): EmulatorCredentials | undefined {
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
  };
}

/** Reads the target from the environment; `undefined` when nothing says where to go. */
export function targetFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AwsTarget | undefined {
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const endpoint = env[ENV.awsEndpoint];
  if (endpoint) return emulatorTarget(endpoint, region ?? DEFAULT_EMULATOR_REGION, credentialsFromEnv(env));
  if (env[ENV.awsTarget] === 'localstack')
    return emulatorTarget(LOCALSTACK_ENDPOINT, region ?? DEFAULT_EMULATOR_REGION, credentialsFromEnv(env));
  if (env[ENV.awsTarget] === 'aws') return region ? { kind: 'aws', region } : { kind: 'aws' };
  return undefined;
}

/** The config every SDK v3 client of this target takes. */
export function clientConfig(target: AwsTarget): {
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: EmulatorCredentials;
  maxAttempts?: number;
  retryMode: 'adaptive';
  requestHandler: { connectionTimeout: number; requestTimeout: number };
} {
  // Node's SDK waits forever on a silent socket by default; a bounded wait turns a hung call into an
  // UnknownOutcomeError the protocol already handles (the batch is not sealed, the claims expire).
  const requestHandler = { connectionTimeout: 3_000, requestTimeout: 30_000 };
  // Adaptive: under throttling the client slows its own send rate instead of spending its retry quota
  // (a new on-demand table starts at 4,000 write units/s; docs/aws-behaviour.md, "Throttling applies nothing").
  const retryMode = 'adaptive' as const;
  if (target.kind === 'aws')
    return target.region
      ? { region: target.region, requestHandler, retryMode }
      : { requestHandler, retryMode };
  return {
    requestHandler,
    retryMode,
    region: target.region,
    endpoint: target.endpoint,
    // Emulators serve buckets on one host:port; virtual-hosted style would need wildcard DNS.
    forcePathStyle: true,
    credentials: target.credentials ?? { accessKeyId: 'test', secretAccessKey: 'test' },
  };
}

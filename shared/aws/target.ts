/**
 * Where the AWS SDK clients point. One switch for the whole project so the same code and the same
 * integration suite run against moto, LocalStack or a real account.
 *
 * - `INLET_AWS_ENDPOINT=http://127.0.0.1:4566` (LocalStack, or a moto server already running): emulator target,
 *   with the environment's credentials if it has any (local mode gives each function its own).
 * - `INLET_AWS_TARGET=aws`: real AWS with the normal credential chain and region.
 * - neither: the caller decides (tests start their own moto server; Lambda uses real AWS).
 */
export type AwsTarget =
  | {
      readonly kind: 'emulator';
      readonly endpoint: string;
      readonly region: string;
      /** What the environment gives (in local mode, a function's own, standing for its role); else dummies. */
      readonly credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    }
  | { readonly kind: 'aws'; readonly region?: string };

export const LOCALSTACK_ENDPOINT = 'http://localhost:4566';
export const DEFAULT_EMULATOR_REGION = 'us-east-1';

export function emulatorTarget(endpoint: string, region = DEFAULT_EMULATOR_REGION): AwsTarget {
  return { kind: 'emulator', endpoint, region };
}

/** Reads the target from the environment; `undefined` when nothing says where to go. */
export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): AwsTarget | undefined {
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (env.INLET_AWS_ENDPOINT) {
    const target = {
      kind: 'emulator' as const,
      endpoint: env.INLET_AWS_ENDPOINT,
      region: region ?? DEFAULT_EMULATOR_REGION,
    };
    if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return target;
    const credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
    return { ...target, credentials };
  }
  if (env.INLET_AWS_TARGET === 'localstack')
    return emulatorTarget(LOCALSTACK_ENDPOINT, region ?? DEFAULT_EMULATOR_REGION);
  if (env.INLET_AWS_TARGET === 'aws') return region ? { kind: 'aws', region } : { kind: 'aws' };
  return undefined;
}

/** The config every SDK v3 client of this target takes. */
export function clientConfig(target: AwsTarget): {
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  maxAttempts?: number;
  retryMode: 'adaptive';
  requestHandler: { connectionTimeout: number; requestTimeout: number };
} {
  // Node's SDK waits forever on a silent socket by default; a bounded wait turns a hung call into an
  // UnknownOutcomeError the protocol already handles (the batch is not sealed, the claims expire).
  const requestHandler = { connectionTimeout: 3_000, requestTimeout: 30_000 };
  // Adaptive: under throttling the client slows its own send rate instead of spending its retry quota
  // (a new on-demand table starts at 4,000 write units/s; docs/protocol.md, "What AWS does ...").
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

// The SDK's default credential chain as a Lambda function needs it, and nothing more. The Lambda bundles
// (infra/functions.ts, `LAMBDA_BUNDLING`) put this module in place of `@aws-sdk/credential-provider-node`,
// whose chain also carries SSO, shared-ini profiles, credential processes, web-identity token files and
// instance metadata: about 100 KB of every bundle (those providers and the STS, SSO and sign-in clients they
// call) that V8 parses at every cold start and that never runs in Lambda. Lambda puts the execution role's
// credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; Lambda
// developer guide, "Defined runtime environment variables"), which the default chain reads first and stops at.
// An environment that serves them over the container credentials endpoint instead
// (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI) gets them from there, as the default chain would.
// Source runs (tests, local tools) keep the SDK's own chain: only the bundles are aliased.
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { fromHttp } from '@aws-sdk/credential-provider-http';

type ProviderInit = Parameters<typeof fromEnv>[0] & Parameters<typeof fromHttp>[0];
type Provider = ReturnType<typeof fromEnv>;

const CONTAINER_URIS = ['AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI'];

/**
 * What every SDK client of a Lambda bundle resolves its credentials with (the client memoizes the result
 * until it expires, as it does the default chain's): the environment's, else the container endpoint's;
 * neither set, the environment provider's error ("Unable to find environment variable credentials.").
 */
export const defaultProvider =
  (init: ProviderInit = {}): Provider =>
  async () => {
    try {
      return await fromEnv(init)();
    } catch (error) {
      if (!CONTAINER_URIS.some((name) => process.env[name])) throw error;
      return fromHttp(init)();
    }
  };

// The rest of @aws-sdk/credential-provider-node's exports, with its semantics: credentials that carry an
// expiration are refreshed five minutes before it.
export const credentialsWillNeedRefresh = (credentials?: { readonly expiration?: Date }) =>
  credentials?.expiration !== undefined;
export const credentialsTreatedAsExpired = (credentials?: { readonly expiration?: Date }) =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultProvider } from '../../../../shared/kernel/aws/lambda-credentials.ts';

// The credential chain the Lambda bundles resolve with in place of the SDK's (infra/lambda-esbuild.ts).
const NAMES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CREDENTIAL_EXPIRATION',
  'AWS_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
];

describe('the Lambda bundles’ credential chain', () => {
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
    for (const name of NAMES) delete process.env[name];
  });
  afterEach(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it('takes the execution role’s credentials from the environment, as Lambda sets them', async () => {
    process.env.AWS_ACCESS_KEY_ID = 'ASIAEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
    process.env.AWS_SESSION_TOKEN = 'token';

    const credentials = await defaultProvider()();

    expect(credentials).toMatchObject({
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    });
    expect(credentials.expiration).toBeUndefined();
  });

  it('takes them from the container credentials endpoint when the environment has none', async () => {
    const expiration = new Date(Date.now() + 3_600_000).toISOString();
    const server = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          AccessKeyId: 'ASIACONTAINER',
          SecretAccessKey: 's',
          Token: 't',
          Expiration: expiration,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      process.env.AWS_CONTAINER_CREDENTIALS_FULL_URI = `http://127.0.0.1:${port}/credentials`;

      const credentials = await defaultProvider()();

      expect(credentials).toMatchObject({
        accessKeyId: 'ASIACONTAINER',
        secretAccessKey: 's',
        sessionToken: 't',
      });
      expect(credentials.expiration?.toISOString()).toBe(expiration);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails with the environment provider’s message when neither is there', async () => {
    await expect(defaultProvider()()).rejects.toThrow('Unable to find environment variable credentials.');
  });
});

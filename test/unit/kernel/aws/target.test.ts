import { describe, expect, it } from 'vitest';
import { clientConfig, targetFromEnv } from '../../../../shared/kernel/aws/target.ts';

describe('targetFromEnv', () => {
  it('uses an explicit endpoint as an emulator target with the default region', () => {
    expect(targetFromEnv({ INLET_AWS_ENDPOINT: 'http://127.0.0.1:5000' })).toEqual({
      kind: 'emulator',
      endpoint: 'http://127.0.0.1:5000',
      region: 'us-east-1',
    });
  });

  it('points localstack at :4566 and keeps the configured region', () => {
    expect(targetFromEnv({ INLET_AWS_TARGET: 'localstack', AWS_REGION: 'eu-west-1' })).toEqual({
      kind: 'emulator',
      endpoint: 'http://localhost:4566',
      region: 'eu-west-1',
    });
  });

  it('selects real AWS only when asked, and nothing when the environment is silent', () => {
    expect(targetFromEnv({ INLET_AWS_TARGET: 'aws', AWS_DEFAULT_REGION: 'eu-central-1' })).toEqual({
      kind: 'aws',
      region: 'eu-central-1',
    });
    expect(targetFromEnv({})).toBeUndefined();
  });
});

describe('emulator credentials', () => {
  it("signs with the function's own credentials when the environment has them, as Lambda sets them", () => {
    const target = targetFromEnv({
      INLET_AWS_ENDPOINT: 'http://127.0.0.1:5000',
      AWS_ACCESS_KEY_ID: 'ASIAINLET0001BATCHER',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
    });
    expect(target && clientConfig(target).credentials).toEqual({
      accessKeyId: 'ASIAINLET0001BATCHER',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    });
  });

  it('keeps the fixed test credentials when the environment has none, or only half of them', () => {
    for (const env of [{}, { AWS_ACCESS_KEY_ID: 'ASIA...' }]) {
      const target = targetFromEnv({ INLET_AWS_ENDPOINT: 'http://127.0.0.1:5000', ...env });
      expect(target && clientConfig(target).credentials).toEqual({
        accessKeyId: 'test',
        secretAccessKey: 'test',
      });
    }
  });
});

describe('clientConfig', () => {
  it('gives emulators path-style S3 and dummy credentials, and real AWS the default chain', () => {
    const emulator = clientConfig({ kind: 'emulator', endpoint: 'http://127.0.0.1:1', region: 'us-east-1' });
    expect(emulator.forcePathStyle).toBe(true);
    expect(emulator.credentials).toEqual({ accessKeyId: 'test', secretAccessKey: 'test' });
    expect(clientConfig({ kind: 'aws' })).toEqual({
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 },
      retryMode: 'adaptive',
    });
  });
});

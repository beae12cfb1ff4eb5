// The IAM check's proxy when the emulator behind it does not answer: each client must get a 503 in its own
// protocol, which the SDK retries and Inlet classifies as an outcome it cannot know, not a body it cannot parse.
import { createServer } from 'node:net';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { LambdaClient, ListFunctionsCommand } from '@aws-sdk/client-lambda';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IamProxy, startIamProxy } from '../../../../local/iam/proxy.ts';
import { classifyAwsError, UnknownOutcomeError } from '../../../../shared/kernel/errors.ts';

/** A port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let proxy: IamProxy;
beforeAll(async () => {
  proxy = await startIamProxy({ upstream: `http://127.0.0.1:${await closedPort()}` });
});
afterAll(() => proxy.stop());

const config = () => ({
  endpoint: proxy.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  maxAttempts: 3,
});

/** The error a call through the proxy ends with, and how many attempts the SDK made. */
async function failure(call: () => Promise<unknown>) {
  const error = (await call().then(
    () => undefined,
    (e: unknown) => e,
  )) as Error & { $metadata?: { httpStatusCode?: number; attempts?: number }; $fault?: string };
  expect(error, 'the call through a proxy with no upstream succeeded').toBeDefined();
  return error;
}

describe('the IAM check proxy with its emulator unreachable', () => {
  it.each([
    [
      'S3 (rest-xml)',
      () =>
        new S3Client({ ...config(), forcePathStyle: true }).send(
          new GetObjectCommand({ Bucket: 'b', Key: 'k' }),
        ),
    ],
    [
      'DynamoDB (JSON 1.0)',
      () =>
        new DynamoDBClient(config()).send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } })),
    ],
    [
      'SQS (JSON 1.0)',
      () =>
        new SQSClient(config()).send(
          new SendMessageCommand({ QueueUrl: `${proxy.endpoint}/000000000000/q`, MessageBody: 'x' }),
        ),
    ],
    ['Lambda (rest-json)', () => new LambdaClient(config()).send(new ListFunctionsCommand({}))],
    [
      'CloudFormation (query, XML)',
      () => new CloudFormationClient(config()).send(new DescribeStacksCommand({})),
    ],
  ])('%s: a 503 ServiceUnavailable the SDK retries, classified as an unknown outcome', async (_, call) => {
    const error = await failure(call);
    expect(error).not.toBeInstanceOf(SyntaxError);
    expect(error.name).toBe('ServiceUnavailable');
    expect(error.$fault).toBe('server');
    expect(error.$metadata?.httpStatusCode).toBe(503);
    // Retried as any 5xx: every attempt reached the proxy.
    expect(error.$metadata?.attempts).toBe(3);
    expect(error.message).toMatch(
      /IAM check proxy: the emulator at http:\/\/127\.0\.0\.1:\d+ did not answer/,
    );
    expect(classifyAwsError('call', error)).toBeInstanceOf(UnknownOutcomeError);
  });
});

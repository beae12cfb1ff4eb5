// The bench's AWS-latency proxy: which operation a request is, and that it holds each request its
// operation's time before the emulator sees it, forwarding it unchanged.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsOperation, type LatencyProxy, startLatencyProxy } from '../../../local/latency-proxy.ts';

const signed = (service: string) => ({
  authorization: `AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=x`,
});
const request = (method: string, url: string, headers: Record<string, string>) =>
  ({ method, url, headers }) as unknown as IncomingMessage;
const none = Buffer.alloc(0);

describe('awsOperation', () => {
  it('names JSON-protocol calls by X-Amz-Target', () => {
    const put = request('POST', '/', { ...signed('dynamodb'), 'x-amz-target': 'DynamoDB_20120810.PutItem' });
    const receive = request('POST', '/', { ...signed('sqs'), 'x-amz-target': 'AmazonSQS.ReceiveMessage' });
    expect(awsOperation(put, none)).toBe('dynamodb:PutItem');
    expect(awsOperation(receive, none)).toBe('sqs:ReceiveMessage');
  });

  it('names S3 REST calls as the IAM reference does', () => {
    expect(awsOperation(request('GET', '/b/k%20x.json?x-id=GetObject', signed('s3')), none)).toBe(
      's3:GetObject',
    );
    expect(awsOperation(request('GET', '/b?list-type=2&prefix=a%2F', signed('s3')), none)).toBe(
      's3:ListObjectsV2',
    );
    expect(awsOperation(request('PUT', '/b/k', signed('s3')), none)).toBe('s3:PutObject');
    expect(awsOperation(request('HEAD', '/b/k', signed('s3')), none)).toBe('s3:HeadObject');
  });

  it('names a Lambda invoke, and anything else by service and method', () => {
    expect(
      awsOperation(request('POST', '/2015-03-31/functions/fn/invocations', signed('lambda')), none),
    ).toBe('lambda:Invoke');
    expect(awsOperation(request('PUT', '/b', signed('s3')), none)).toBe('s3:PUT');
    expect(awsOperation(request('GET', '/moto-api/', {}), none)).toBe('unsigned:GET');
  });
});

describe('startLatencyProxy', () => {
  let upstream: Server;
  let proxy: LatencyProxy;
  const seen: { url: string; target: string; body: string; at: number }[] = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          url: req.url ?? '',
          target: String(req.headers['x-amz-target'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        res.writeHead(201, { 'content-type': 'application/x-amz-json-1.0', 'x-upstream': 'yes' });
        res.end('{"answer":1}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    proxy = await startLatencyProxy({
      upstream: `http://127.0.0.1:${port}`,
      latencyMs: (operation) => (operation === 'dynamodb:PutItem' ? 150 : 0),
    });
  });

  afterAll(async () => {
    await proxy.stop();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  const call = (target: string, body: string) =>
    fetch(`${proxy.endpoint}/?q=1`, {
      method: 'POST',
      headers: { ...signed('dynamodb'), 'x-amz-target': `DynamoDB_20120810.${target}` },
      body,
    });

  it("holds a request its operation's latency before the emulator sees it, and forwards it unchanged", async () => {
    const sent = Date.now();
    const response = await call('PutItem', '{"TableName":"t"}');
    expect(response.status).toBe(201);
    expect(response.headers.get('x-upstream')).toBe('yes');
    expect(await response.text()).toBe('{"answer":1}');
    const arrival = seen.find((r) => r.target.endsWith('PutItem'));
    expect(arrival).toMatchObject({ url: '/?q=1', body: '{"TableName":"t"}' });
    expect((arrival?.at ?? 0) - sent).toBeGreaterThanOrEqual(140);
  });

  it('counts what it held, by operation', async () => {
    await call('GetItem', '{}');
    expect(proxy.delayed()).toEqual({
      requests: { 'dynamodb:GetItem': 1, 'dynamodb:PutItem': 1 },
      heldMs: 150,
    });
  });
});

import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeniedResponse } from '../../local/iam/denied.ts';

/** One HTTP request a function process sent, as the fault proxy sees it. */
export interface ProxiedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The SigV4 signing service (`s3`, `sqs`, `dynamodb`...). */
  readonly service: string;
  /** The SDK's id of the call this attempt belongs to (`amz-sdk-invocation-id`): the same on every retry. */
  readonly call: string;
}

export interface FaultProxy {
  /** Where the function's clients send their requests (its INLET_AWS_ENDPOINT). */
  readonly endpoint: string;
  /** Each request is held this long before it is forwarded: a slow AWS. */
  delayMs: number;
  /** An answer in AWS's place (a throttle, a refusal), or undefined to forward the request. */
  fault: ((request: ProxiedRequest) => DeniedResponse | undefined) | undefined;
  stop(): Promise<void>;
}

/**
 * An HTTP proxy in front of `upstream` (the IAM check's proxy, or the emulator) for one function process's
 * calls: it answers what a test makes AWS answer (SlowDown, AccessDenied, a slow network) at the wire, so the
 * bundle's SDK clients retry and classify them exactly as they would on AWS, in the function's own process.
 */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const to = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const answered = proxy.fault?.({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: body.toString('utf8'),
        service: /Credential=[^/]+\/\d+\/[^/]+\/([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? '',
        call: String(req.headers['amz-sdk-invocation-id'] ?? ''),
      });
      setTimeout(() => {
        if (answered) {
          res.writeHead(answered.status, answered.headers);
          res.end(answered.body);
          return;
        }
        const { expect: _, ...headers } = req.headers;
        const forward = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', () => res.destroy());
        forward.end(body);
      }, proxy.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: FaultProxy = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delayMs: 0,
    fault: undefined,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}

/** S3's answer to a request rate it will not take (503 SlowDown), which the SDK retries as a throttle. */
export function slowDown(): DeniedResponse {
  return {
    status: 503,
    headers: { 'content-type': 'application/xml' },
    body: '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>fault</RequestId><HostId>fault</HostId></Error>',
  };
}

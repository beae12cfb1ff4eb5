/**
 * What every HTTP front proxy between the SDK clients and the emulator shares (the IAM check, the bench's
 * AWS-latency layer): a server on 127.0.0.1 that reads each request whole, a keep-alive forwarder to the
 * emulator, and the signer of a request as its SigV4 credential scope names it.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { serviceUnavailable } from './iam/denied.ts';

/** The access key id and service of a SigV4-signed request (`Credential=AKID/date/region/service/...`). */
export function signer(
  headers: IncomingMessage['headers'],
): { accessKeyId: string; region: string; service: string } | undefined {
  const m = /Credential=([^/]+)\/\d+\/([^/]+)\/([^/]+)\//.exec(headers.authorization ?? '');
  return m?.[1] && m[2] && m[3] ? { accessKeyId: m[1], region: m[2], service: m[3] } : undefined;
}

/** The emulator behind the proxy did not answer (refused, reset, gone): the call never reached a service. */
export class UpstreamError extends Error {
  constructor(upstream: string, cause: unknown) {
    super(
      `the emulator at ${upstream} did not answer: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'UpstreamError';
  }
}

export interface Forwarder {
  /** Sends the request, its body already read whole, to the upstream as received; resolves on its headers. */
  forward(req: IncomingMessage, body: Buffer): Promise<IncomingMessage>;
  /** A GET to the upstream outside the client's request (a look-up the proxy needs to decide). */
  get(path: string): Promise<{ status: number; body: string }>;
  destroy(): void;
}

export function forwarderTo(upstreamUrl: string): Forwarder {
  const upstream = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  return {
    forward: (req, body) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        // The body is here whole: the client's `Expect: 100-continue` was answered by this server already.
        const { expect: _, ...headers } = req.headers;
        const out = httpRequest(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
          resolve,
        );
        out.once('error', (error) => reject(new UpstreamError(upstreamUrl, error)));
        out.end(body);
      }),
    async get(path) {
      try {
        const response = await fetch(new URL(path, upstream), {
          headers: { authorization: 'AWS4-HMAC-SHA256 Credential=test/20200101/us-east-1/s3/aws4_request' },
        });
        return { status: response.status, body: await response.text() };
      } catch (error) {
        throw new UpstreamError(upstreamUrl, error);
      }
    },
    destroy: () => agent.destroy(),
  };
}

/** Streams the upstream's answer back to the client, with `extra` headers added. */
export function pipeResponse(
  from: IncomingMessage,
  to: ServerResponse,
  extra: Record<string, string> = {},
): void {
  to.writeHead(from.statusCode ?? 502, { ...from.headers, ...extra });
  from.pipe(to);
}

export interface ProxyServer {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (`port`, or a free one) and hands each request to `handle` with its body read whole.
 * An upstream that did not answer a signed request is answered as AWS answers a failing service, a 503 in
 * the request's protocol, which the SDK retries (a plain-text body fails to parse: a SyntaxError no caller
 * retries); any other throw answers 502 with `label` and the error, so the client sees which layer failed.
 */
export async function startProxyServer(options: {
  readonly label: string;
  readonly port?: number;
  readonly handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>;
  /** Run on stop, after the connections are closed. */
  readonly onStop?: () => void;
}): Promise<ProxyServer> {
  let failures = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      options.handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        const message = `${options.label}: ${error instanceof Error ? error.message : String(error)}`;
        if (res.headersSent) return res.end();
        const signed = signer(req.headers);
        if (error instanceof UpstreamError && signed) {
          const wire = {
            method: req.method ?? 'GET',
            json: Boolean(req.headers['x-amz-target']),
            ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
          };
          const answer = serviceUnavailable(signed.service, wire, message, `inlet-proxy-${++failures}`);
          res.writeHead(answer.status, { ...answer.headers, 'x-inlet-proxy': 'upstream' });
          return res.end(answer.body);
        }
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(message);
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        options.onStop?.();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A front proxy that makes the emulator answer as slowly as AWS does: each request is held for the latency
 * of its operation before it is forwarded, so clients that wait on one request at a time pay what they
 * would pay on AWS, and clients that overlap requests (parallel partitions, parallel reads, batching) win
 * what they would win there. The emulator's own time comes on top. Used by the bench's AWS-latency pass and
 * `npm start -- --aws-latency`; every client that can point at an endpoint (the SDK, delta-rs) can point at
 * this one, and it forwards every request unchanged (its signature too), so it can stand in front of the IAM
 * check.
 */
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { forwarderTo, type ProxyServer, pipeResponse, signer, startProxyServer } from './http-proxy.ts';
import type { IamAccess } from './iam/client.ts';
import { mapRequest, UnmappedRequestError } from './iam/requests.ts';

/**
 * The API operation of a request, `service:Operation` as IAM's reference names it (`s3:GetObject`,
 * `dynamodb:PutItem`, `sqs:ReceiveMessage`): from `X-Amz-Target` for the JSON protocols, from the REST
 * shape for S3 (the IAM check's own mapping) and Lambda; `service:METHOD` for anything else.
 */
export function awsOperation(req: IncomingMessage, body: Buffer): string {
  const service = signer(req.headers)?.service ?? 'unsigned';
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return `${service}:${target.split('.').pop() ?? target}`;
  if (service === 's3') {
    try {
      return mapRequest({
        service,
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body,
        region: 'us-east-1',
        account: '000000000000',
      }).operation;
    } catch (error) {
      if (!(error instanceof UnmappedRequestError)) throw error;
    }
  }
  if (service === 'lambda' && /\/functions\/[^/]+\/invocations$/.test(req.url?.split('?')[0] ?? ''))
    return 'lambda:Invoke';
  return `${service}:${req.method ?? 'GET'}`;
}

export interface LatencyProxy extends ProxyServer {
  /** Requests held so far, by operation, and the milliseconds they were held in all. */
  delayed(): { readonly requests: Record<string, number>; readonly heldMs: number };
}

/**
 * Local mode's wiring with AWS's latencies: the proxy in front of the IAM check, so every call that reaches
 * the check (each function process as its role, each event source mapping's polls, the state machine's own
 * calls) is held first, then checked, then answered; the returned access is the IAM check's with the proxy's
 * endpoint, for the runner and the Step Functions executor. In front rather than behind: a call AWS denies
 * costs its round trip too, and the check's own look-ups (a bucket's policy) are not AWS calls to hold.
 */
export async function holdInFrontOf(
  iam: IamAccess,
  latencyMs: (operation: string) => number,
): Promise<{ readonly proxy: LatencyProxy; readonly iam: IamAccess }> {
  const proxy = await startLatencyProxy({ upstream: iam.endpoint, latencyMs });
  return { proxy, iam: { ...iam, endpoint: proxy.endpoint } };
}

/** Starts the proxy on 127.0.0.1 in front of `upstream`; `latencyMs` gives each operation's hold. */
export async function startLatencyProxy(options: {
  readonly upstream: string;
  readonly latencyMs: (operation: string) => number;
  readonly port?: number;
}): Promise<LatencyProxy> {
  const upstream = forwarderTo(options.upstream);
  const requests = new Map<string, number>();
  let heldMs = 0;
  const server = await startProxyServer({
    label: 'AWS-latency proxy',
    ...(options.port !== undefined ? { port: options.port } : {}),
    onStop: () => upstream.destroy(),
    async handle(req, res, body) {
      const operation = awsOperation(req, body);
      const hold = options.latencyMs(operation);
      requests.set(operation, (requests.get(operation) ?? 0) + 1);
      heldMs += hold;
      if (hold > 0) await sleep(hold);
      pipeResponse(await upstream.forward(req, body), res);
    },
  });
  return {
    ...server,
    delayed: () => ({ requests: Object.fromEntries([...requests].sort()), heldMs: Math.round(heldMs) }),
  };
}

/**
 * The IAM check: an HTTP front proxy between the functions and the emulator. Each function's client signs
 * with its own access key id (registered here with the function's role, bound from the synthesized
 * template); each request is mapped to the authorization AWS performs for it, evaluated against the role's
 * policy and the resource's policy, and either forwarded or answered with AccessDenied as that service
 * answers it. Requests signed with any other key (tests, the CLI) pass unchecked. The decisions are kept by
 * the check (./check.ts) for the calls-vs-grants analysis (./report.ts).
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Credentials, type DecisionRecord, IamCheck, type Registration } from './check.ts';
import { accessDenied, deniedMessage, serviceUnavailable } from './denied.ts';
import type { AuthzRequest } from './evaluator.ts';
import { type MappedRequest, mapRequest, UnmappedRequestError } from './requests.ts';

export { type Credentials, type DecisionRecord, IamCheck, type Registration };

export const CONTROL_PREFIX = '/__inlet-iam/';

/** The access key id and service of a SigV4-signed request (`Credential=AKID/date/region/service/...`). */
export function signer(
  headers: IncomingMessage['headers'],
): { accessKeyId: string; region: string; service: string } | undefined {
  const m = /Credential=([^/]+)\/\d+\/([^/]+)\/([^/]+)\//.exec(headers.authorization ?? '');
  return m?.[1] && m[2] && m[3] ? { accessKeyId: m[1], region: m[2], service: m[3] } : undefined;
}

export interface IamProxy {
  readonly endpoint: string;
  readonly check: IamCheck;
  stop(): Promise<void>;
}

/**
 * Starts the proxy on 127.0.0.1 in front of `upstream` (moto). Control requests (`/__inlet-iam/...`) let
 * other processes register stacks, authorize service-made calls and read denials (./client.ts).
 */
export async function startIamProxy(options: {
  readonly upstream: string;
  readonly decisionsFile?: string;
  readonly port?: number;
}): Promise<IamProxy> {
  const check = new IamCheck(options.decisionsFile);
  const upstream = new URL(options.upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  let requestIds = 0;

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      // The body is here whole: the client's `Expect: 100-continue` was answered by this server already.
      const { expect: _, ...headers } = req.headers;
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
        resolve,
      );
      out.once('error', (error) => reject(new UpstreamError(options.upstream, error)));
      out.end(body);
    });

  const upstreamGet = async (path: string): Promise<{ status: number; body: string }> => {
    try {
      const response = await fetch(new URL(path, upstream), {
        headers: { authorization: 'AWS4-HMAC-SHA256 Credential=test/20200101/us-east-1/s3/aws4_request' },
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      throw new UpstreamError(options.upstream, error);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (req.url?.startsWith(CONTROL_PREFIX)) return control(check, req, res, body);
    const signed = signer(req.headers);
    const caller = check.caller(signed?.accessKeyId);
    if (!signed || !caller) {
      check.countUnchecked(signed?.service ?? 'unsigned');
      return pipe(await forward(req, body), res, 'unchecked');
    }
    const { stack } = caller.registration;
    const request = {
      service: signed.service,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body,
      region: signed.region,
      account: stack.account,
    };
    const requestId = `inlet-iam-${++requestIds}`;
    const json = Boolean(req.headers['x-amz-target']);
    let mapped: MappedRequest;
    try {
      mapped = mapRequest(request);
      if (mapped.copiesTagsOf) mapped = await withSourceTags(mapped, upstreamGet);
    } catch (error) {
      if (!(error instanceof UnmappedRequestError)) throw error;
      const role = stack.roles[caller.owner];
      const record = check.record(
        caller,
        role?.name ?? '?',
        `${signed.service}:?`,
        { action: `${signed.service}:?`, resource: `${req.method} ${req.url}`, context: {} },
        { allowed: false, result: `Error: ${error.message}`, allowedBy: [], resourceAllows: false },
      );
      return send(
        res,
        accessDenied(
          signed.service,
          { method: request.method, json },
          `${error.message} (#${record.seq})`,
          requestId,
        ),
      );
    }
    const { denied } = await check.authorize(caller, mapped.operation, mapped.authz);
    if (denied) {
      const { action, resource, result } = denied.record;
      const message = deniedMessage(denied.principal, action, resource, result === 'ExplicitlyDenied');
      return send(res, accessDenied(signed.service, { method: request.method, json }, message, requestId));
    }
    const response = await forward(req, body);
    if (mapped.missingKeyNeedsList && response.statusCode === 404) {
      const { bucket } = mapped.missingKeyNeedsList;
      const list = await check.authorize(
        caller,
        mapped.operation,
        [{ action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}`, context: {} }],
        'the key is missing: S3 answers 404 only to a caller allowed s3:ListBucket, otherwise 403',
      );
      if (list.denied) {
        response.resume();
        const target = mapped.authz[0];
        const message = deniedMessage(
          list.denied.principal,
          target?.action ?? 's3:GetObject',
          target?.resource ?? '',
          false,
        );
        return send(res, accessDenied('s3', { method: request.method, json: false }, message, requestId));
      }
    }
    return pipe(response, res, 'allowed');
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        const message = `IAM check proxy: ${error instanceof Error ? error.message : String(error)}`;
        if (res.headersSent) return res.end();
        // A function's SDK must see what AWS would send when a service fails, a 503 in its protocol, which
        // it retries: a plain-text body failed to parse (SyntaxError), an error no caller retries.
        const signed = signer(req.headers);
        if (error instanceof UpstreamError && signed && !req.url?.startsWith(CONTROL_PREFIX)) {
          const wire = {
            method: req.method ?? 'GET',
            json: Boolean(req.headers['x-amz-target']),
            ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
          };
          return send(res, serviceUnavailable(signed.service, wire, message, `inlet-iam-${++requestIds}`));
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
    check,
    stop: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The emulator behind the proxy did not answer (refused, reset, gone): the call never reached a service. */
class UpstreamError extends Error {
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

function pipe(from: IncomingMessage, to: ServerResponse, mark: string): void {
  to.writeHead(from.statusCode ?? 502, { ...from.headers, 'x-inlet-iam': mark });
  from.pipe(to);
}

function send(res: ServerResponse, answer: ReturnType<typeof accessDenied>): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'x-inlet-iam': answer.status === 503 ? 'upstream' : 'denied',
  });
  res.end(answer.body);
}

/**
 * CopyObject's default tagging directive (COPY) copies the source's tags: for a tagged source S3 also
 * authorizes reading them and writing them on the copy
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html, "Permissions").
 */
async function withSourceTags(
  mapped: MappedRequest,
  get: (path: string) => Promise<{ status: number; body: string }>,
): Promise<MappedRequest> {
  const from = mapped.copiesTagsOf;
  if (!from) return mapped;
  const version = from.versionId ? `&versionId=${encodeURIComponent(from.versionId)}` : '';
  const key = from.key.split('/').map(encodeURIComponent).join('/');
  const tags = await get(`/${from.bucket}/${key}?tagging${version}`);
  if (tags.status !== 200 || !tags.body.includes('<Tag>')) return mapped;
  const [write] = mapped.authz;
  return {
    ...mapped,
    authz: [
      ...mapped.authz,
      {
        action: from.versionId ? 's3:GetObjectVersionTagging' : 's3:GetObjectTagging',
        resource: `arn:aws:s3:::${from.bucket}/${from.key}`,
        context: from.versionId ? { 's3:versionid': from.versionId } : {},
      },
      { action: 's3:PutObjectTagging', resource: write?.resource ?? '', context: {} },
    ],
  };
}

async function control(
  check: IamCheck,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  const path = url.pathname.slice(CONTROL_PREFIX.length);
  const reply = (value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const input = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
  if (path === 'register') return reply(check.register(input as unknown as Registration));
  if (path === 'authorize') {
    const caller = check.caller(String(input.accessKeyId));
    if (!caller) throw new Error(`unknown access key ${String(input.accessKeyId)}`);
    const { denied } = await check.authorize(caller, String(input.operation), input.authz as AuthzRequest[]);
    if (!denied) return reply({ allowed: true });
    const { action, resource, result } = denied.record;
    const message = deniedMessage(denied.principal, action, resource, result === 'ExplicitlyDenied');
    return reply({ allowed: false, denied: denied.record, message });
  }
  if (path === 'acknowledge') {
    check.acknowledge(Number(input.seq));
    return reply({});
  }
  if (path === 'denials') {
    const after = Number(url.searchParams.get('after') ?? 0);
    return reply({
      last: check.lastSeq,
      denials: check.unexpectedDenials(after, url.searchParams.has('expected')),
    });
  }
  res.writeHead(404);
  res.end();
}

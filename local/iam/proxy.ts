/**
 * The IAM check: an HTTP front proxy between the functions and the emulator. Each function's client signs
 * with its own access key id (registered here with the function's role, bound from the synthesized
 * template); each request is mapped to the authorization AWS performs for it, evaluated against the role's
 * policy and the resource's policy, and either forwarded or answered with AccessDenied as that service
 * answers it. Requests signed with any other key (tests, the CLI) pass unchecked. The decisions are kept by
 * the check (./check.ts) for the calls-vs-grants analysis (./report.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { forwarderTo, pipeResponse, signer, startProxyServer } from '../http-proxy.ts';
import { type Credentials, type DecisionRecord, IamCheck, type Registration } from './check.ts';
import { accessDenied, deniedMessage } from './denied.ts';
import type { AuthzRequest } from './evaluator.ts';
import { type MappedRequest, mapRequest, UnmappedRequestError } from './requests.ts';

export { type Credentials, type DecisionRecord, IamCheck, type Registration, signer };

export const CONTROL_PREFIX = '/__inlet-iam/';

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
  const upstream = forwarderTo(options.upstream);
  const forward = upstream.forward;
  const upstreamGet = upstream.get;
  let requestIds = 0;

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

  const server = await startProxyServer({
    label: 'IAM check proxy',
    ...(options.port !== undefined ? { port: options.port } : {}),
    handle,
    onStop: () => upstream.destroy(),
  });
  return { endpoint: server.endpoint, check, stop: server.stop };
}

function pipe(from: IncomingMessage, to: ServerResponse, mark: string): void {
  pipeResponse(from, to, { 'x-inlet-iam': mark });
}

function send(res: ServerResponse, denied: ReturnType<typeof accessDenied>): void {
  res.writeHead(denied.status, { ...denied.headers, 'x-inlet-iam': 'denied' });
  res.end(denied.body);
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
  // Each control answer closes its connection: a kept-alive one could carry the client's next request just
  // as the server's keep-alive timer closes it (the client's idle timer, a second shorter, fires late under
  // load), and that request fails as `fetch failed` without reaching the proxy. Control calls are few.
  const reply = (value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
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
  res.writeHead(404, { connection: 'close' });
  res.end();
}

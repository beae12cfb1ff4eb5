/**
 * The IAM check: an HTTP front proxy between the functions and the emulator. Each function's client signs
 * with its own access key id (registered here with the function's role, bound from the synthesized
 * template); each request is mapped to the authorization AWS performs for it, evaluated against the role's
 * policy and the resource's policy, and either forwarded or answered with AccessDenied as that service
 * answers it. Requests signed with any other key (tests, the CLI) pass unchecked. Every decision is kept
 * (and written as JSON lines) for the calls-vs-grants analysis (./coverage.ts).
 */
import { appendFileSync } from 'node:fs';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { accessDenied, deniedMessage } from './denied.ts';
import { type AuthzRequest, type Decision, evaluate, sessionArn } from './evaluator.ts';
import type { BoundStack } from './policies.ts';
import {
  LEADING_ITEMS,
  leadingKeys,
  type MappedRequest,
  mapRequest,
  UnmappedRequestError,
} from './requests.ts';

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** One evaluation: a request's action on one resource by one function (or service), and the outcome. */
export interface DecisionRecord {
  readonly seq: number;
  readonly stack: string;
  readonly caller: string;
  readonly role: string;
  readonly operation: string;
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | string[]>>;
  readonly allowed: boolean;
  readonly result: string;
  readonly allowedBy: readonly string[];
  readonly resourceAllows: boolean;
  /** Why this evaluation was made when it is not the request's own action (S3's 404-or-403 rule). */
  readonly reason?: string;
  /** A test expected this denial: a fixture's, or one the test made on purpose and acknowledged. */
  expected?: boolean;
}

export interface Registration {
  readonly label: string;
  readonly stack: BoundStack;
  /** A fixture with a policy cut on purpose: its denials are what the test asserts, not failures. */
  readonly expectDenials?: boolean;
}

interface Caller {
  readonly registration: Registration;
  readonly owner: string;
}

export const CONTROL_PREFIX = '/__inlet-iam/';
const SECRET = 'inlet-iam-check';

export class IamCheck {
  readonly records: DecisionRecord[] = [];
  readonly registrations: Registration[] = [];
  readonly unchecked = new Map<string, number>();
  private readonly callers = new Map<string, Caller>();
  private seq = 0;

  constructor(private readonly decisionsFile?: string) {}

  /** Gives each role of the stack an access key id; requests signed with it are checked as that role. */
  register(registration: Registration): Record<string, Credentials> {
    this.registrations.push(registration);
    const n = this.registrations.length;
    const keys: Record<string, Credentials> = {};
    for (const owner of Object.keys(registration.stack.roles)) {
      const accessKeyId = `ASIAINLET${String(n).padStart(4, '0')}${owner.toUpperCase().replace(/[^A-Z0-9]/g, '')}`;
      this.callers.set(accessKeyId, { registration, owner });
      keys[owner] = { accessKeyId, secretAccessKey: SECRET };
    }
    return keys;
  }

  caller(accessKeyId: string | undefined): Caller | undefined {
    return accessKeyId ? this.callers.get(accessKeyId) : undefined;
  }

  /** Evaluates each authorization a request needs; records them; the first denial, if any. */
  async authorize(
    caller: Caller,
    operation: string,
    authz: readonly AuthzRequest[],
    reason?: string,
  ): Promise<{ denied?: { record: DecisionRecord; principal: string } }> {
    const { stack } = caller.registration;
    const role = stack.roles[caller.owner];
    if (!role) throw new Error(`no role ${caller.owner}`);
    const principal = sessionArn(role.arn, caller.owner);
    let denied: { record: DecisionRecord; principal: string } | undefined;
    for (const request of authz) {
      const filled = withLeadingKeys(stack, request);
      const decision = await evaluate(stack, { arn: principal, policy: role.policy }, filled);
      const record = this.record(caller, role.name, operation, filled, decision, reason);
      if (!decision.allowed && !denied) denied = { record, principal };
    }
    return denied ? { denied } : {};
  }

  record(
    caller: Caller,
    role: string,
    operation: string,
    request: AuthzRequest,
    decision: Decision,
    reason?: string,
  ): DecisionRecord {
    const record: DecisionRecord = {
      seq: ++this.seq,
      stack: caller.registration.label,
      caller: caller.owner,
      role,
      operation,
      action: request.action,
      resource: request.resource,
      context: request.context,
      ...decision,
      ...(reason ? { reason } : {}),
      ...(caller.registration.expectDenials ? { expected: true } : {}),
    };
    this.records.push(record);
    if (this.decisionsFile) appendFileSync(this.decisionsFile, `${JSON.stringify(record)}\n`);
    return record;
  }

  /** Denials after `seq` that no fixture expected (or all, with `expected`): requests AWS would refuse. */
  unexpectedDenials(after = 0, expected = false): DecisionRecord[] {
    return this.records.filter((r) => r.seq > after && !r.allowed && (expected || !r.expected));
  }

  /** Denials up to `seq` were made on purpose by the test that asserts them. */
  acknowledge(seq: number): void {
    for (const record of this.records) if (record.seq <= seq && !record.allowed) record.expected = true;
  }

  get lastSeq(): number {
    return this.seq;
  }

  countUnchecked(operation: string): void {
    this.unchecked.set(operation, (this.unchecked.get(operation) ?? 0) + 1);
  }
}

/** `dynamodb:LeadingKeys` from the items a request names, by the table's partition key. */
function withLeadingKeys(stack: BoundStack, request: AuthzRequest): AuthzRequest {
  const marker = request.context[LEADING_ITEMS];
  if (!marker) return request;
  const { [LEADING_ITEMS]: _, ...context } = request.context;
  const table = request.resource.split(':table/')[1]?.split('/')[0] ?? '';
  const partitionKey = stack.partitionKeys[table];
  if (!partitionKey) return { ...request, context };
  const items = JSON.parse(String([marker].flat()[0])) as Record<string, unknown>[];
  return { ...request, context: { ...context, 'dynamodb:LeadingKeys': leadingKeys(items, partitionKey) } };
}

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
      out.once('error', reject);
      out.end(body);
    });

  const upstreamGet = async (path: string): Promise<{ status: number; body: string }> => {
    const response = await fetch(new URL(path, upstream), {
      headers: { authorization: 'AWS4-HMAC-SHA256 Credential=test/20200101/us-east-1/s3/aws4_request' },
    });
    return { status: response.status, body: await response.text() };
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
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`IAM check proxy: ${error instanceof Error ? error.message : String(error)}`);
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

function pipe(from: IncomingMessage, to: ServerResponse, mark: string): void {
  to.writeHead(from.statusCode ?? 502, { ...from.headers, 'x-inlet-iam': mark });
  from.pipe(to);
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
    return reply({ allowed: !denied, ...(denied ? { denied: denied.record } : {}) });
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

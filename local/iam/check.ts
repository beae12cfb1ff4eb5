/**
 * The IAM check's book: which access key id is which role of which stack, each request's evaluation, and
 * every decision kept (and written as JSON lines) for the calls-vs-grants analysis (./report.ts).
 */
import { appendFileSync } from 'node:fs';
import { type AuthzRequest, type Decision, evaluate, sessionArn } from './evaluator.ts';
import type { BoundStack } from './policies.ts';
import { LEADING_ITEMS, leadingKeys } from './requests.ts';

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

export interface Caller {
  readonly registration: Registration;
  readonly owner: string;
}

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

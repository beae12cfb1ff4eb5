/**
 * Least privilege, measured: per function, the calls it made against the statements it was granted, and
 * the mutation check. A statement is needed when some request was allowed by it alone (no other statement
 * of the role, and not the resource's policy, allows it): removing it would turn that request into
 * AccessDenied and fail the test that made it. A statement no request needs is reported, unless it is one
 * that no local run can exercise (listed below, each with why).
 */
import { writeFileSync } from 'node:fs';
import type { IamCheck } from './proxy.ts';

/** Grants only AWS's own services use, which nothing here runs: they cannot be needed by a local request. */
export const NOT_EXERCISED_LOCALLY: readonly { owner: string; statement: RegExp; why: string }[] = [
  {
    owner: 'StateMachine',
    statement: /^logs:CreateLogDelivery/,
    why: 'Step Functions delivers execution logs and X-Ray traces itself; the local ASL interpreter does neither',
  },
  {
    owner: 'Scheduler',
    statement: /^sqs:SendMessage on SinkQueue$/,
    why: 'EventBridge Scheduler sends the nudges; moto has no Scheduler (the delivery is checked against the template instead)',
  },
  {
    owner: 'StateMachineEventsRole',
    statement: /^states:StartExecution/,
    why: 'EventBridge starts reconcile executions on schedule; the delivery is checked against the template instead',
  },
  {
    owner: 'BucketNotificationsHandler',
    statement: /^s3:PutBucketNotification/,
    why: "CDK's custom resource configures the bucket notifications at deploy time; local mode applies them with the S3 API",
  },
];

export interface GrantUse {
  readonly owner: string;
  readonly statement: string;
  readonly needed: boolean;
  /** A request that needed it, for the record: `s3:PutObject arn:aws:s3:::b/_staging/...`. */
  readonly example?: string;
  readonly exempt?: string;
}

export interface IamReport {
  readonly calls: Record<string, Record<string, number>>;
  readonly grants: GrantUse[];
  /** Statements no request needed and no exemption covers: the mutation check's failures. */
  readonly unneeded: GrantUse[];
  readonly denials: number;
  readonly unchecked: Record<string, number>;
}

export function analyze(check: IamCheck): IamReport {
  const calls: Record<string, Record<string, number>> = {};
  const byLabel = new Map(check.registrations.map((r) => [r.label, r]));
  const counted = check.records.filter((r) => !byLabel.get(r.stack)?.expectDenials);
  // A stack's grants count where its function ran: a harness registers every role of the template, and the
  // roles it never runs (the state machine's in an ingestion test) say nothing about what is needed.
  const ran = new Set(counted.map((r) => `${r.stack}\n${r.caller}`));
  const ranAnywhere = new Set(counted.map((r) => r.caller));
  const grants = new Map<string, GrantUse>();
  for (const registration of check.registrations) {
    if (registration.expectDenials) continue;
    for (const [owner, role] of Object.entries(registration.stack.roles)) {
      if (ranAnywhere.has(owner) && !ran.has(`${registration.label}\n${owner}`)) continue;
      for (const statement of Object.values(role.grants)) {
        const key = `${owner}\n${statement}`;
        if (!grants.has(key)) grants.set(key, { owner, statement, needed: false });
      }
    }
  }
  for (const record of counted) {
    const registration = byLabel.get(record.stack);
    if (!registration) continue;
    const mine = calls[record.caller] ?? {};
    calls[record.caller] = mine;
    const call = record.reason ? `${record.action} (${record.operation}, key missing)` : record.action;
    mine[call] = (mine[call] ?? 0) + 1;
    if (!record.allowed || record.resourceAllows || record.allowedBy.length !== 1) continue;
    const statement = registration.stack.roles[record.caller]?.grants[record.allowedBy[0] ?? ''];
    if (statement === undefined) continue;
    const key = `${record.caller}\n${statement}`;
    const use = grants.get(key);
    if (use && !use.needed)
      grants.set(key, { ...use, needed: true, example: `${record.action} ${record.resource}` });
  }
  const all = [...grants.values()].map((g) => {
    const exempt = NOT_EXERCISED_LOCALLY.find((e) => e.owner === g.owner && e.statement.test(g.statement));
    return !g.needed && exempt ? { ...g, exempt: exempt.why } : g;
  });
  return {
    calls,
    grants: all,
    unneeded: all.filter((g) => !g.needed && !g.exempt),
    denials: check.records.filter((r) => !r.allowed && !r.expected).length,
    unchecked: Object.fromEntries(check.unchecked),
  };
}

/** The calls-vs-grants table (docs/security.md), one row per function. */
export function markdownTable(report: IamReport): string {
  const owners = [...new Set(report.grants.map((g) => g.owner))].sort();
  const rows = owners.map((owner) => {
    const made = Object.keys(report.calls[owner] ?? {})
      .sort()
      .join(', ');
    const mine = report.grants.filter((g) => g.owner === owner);
    const needed = mine.filter((g) => g.needed).length;
    const exempt = mine.filter((g) => g.exempt).length;
    const unneeded = mine.filter((g) => !g.needed && !g.exempt).map((g) => g.statement);
    const called = new Set(Object.keys(report.calls[owner] ?? {}).map((c) => c.split(' ')[0]?.toLowerCase()));
    const granted = new Set(
      mine.filter((g) => !g.exempt).flatMap((g) => (g.statement.split(' on ')[0] ?? '').split(', ')),
    );
    const idle = [...granted].filter((a) => !called.has(a.toLowerCase())).sort();
    return `| ${owner} | ${made || '—'} | ${idle.join(', ') || '—'} | ${mine.length} | ${needed} | ${exempt} | ${unneeded.join('; ') || '—'} |`;
  });
  return [
    '| Function | Actions called (suite) | Granted, never called | Statements | Needed by a call | Not exercisable here | Not needed |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

export async function writeIamReport(check: IamCheck, path: string): Promise<void> {
  const report = analyze(check);
  writeFileSync(path, `${JSON.stringify({ ...report, table: markdownTable(report) }, null, 2)}\n`);
}

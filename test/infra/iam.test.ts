// Least privilege, asserted (docs/security.md): every function's grants, exactly, and no wildcard action or
// resource in any Allow statement except the few AWS (or CDK's own custom resources) require.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InletStack, type InletStackProps } from '../../infra/inlet-stack.ts';
import { cdkApp } from './cdk-app.ts';

function synth(props: Partial<InletStackProps> = {}): Record<string, { Type: string; Properties?: unknown }> {
  const app = cdkApp();
  const tables = [{ name: 'orders', prefix: 'orders/' }];
  return Template.fromStack(new InletStack(app, 'Iam', { tables, ...props })).toJSON().Resources;
}

/** A resource as readable text: `Ledger`, `Manifests/_staging/*`, `arn:<partition>:events:...`. */
function render(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const r = resource as Record<string, unknown>;
  if (r['Fn::GetAtt'])
    return (r['Fn::GetAtt'] as string[])[0]?.replace(/^Inlet(State|Functions)?|[0-9A-F]{8}$/g, '') ?? '?';
  if (r.Ref) return `<${r.Ref as string}>`;
  if (r['Fn::Join']) return ((r['Fn::Join'] as [string, unknown[]])[1] ?? []).map(render).join('');
  return JSON.stringify(r);
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
}

/** Every Allow statement in an IAM or resource policy, as `resourceId: action on resource`. */
function allows(resources: ReturnType<typeof synth>): { id: string; action: string; resource: string }[] {
  const found: { id: string; action: string; resource: string }[] = [];
  const walk = (id: string, node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const statements = (node as { Statement?: unknown }).Statement;
    if (Array.isArray(statements)) {
      for (const s of statements as Statement[]) {
        if (s.Effect !== 'Allow' || s.Resource === undefined) continue;
        for (const action of [s.Action].flat())
          for (const resource of [s.Resource].flat()) found.push({ id, action, resource: render(resource) });
      }
    }
    for (const value of Object.values(node)) walk(id, value);
  };
  for (const [id, r] of Object.entries(resources)) walk(id, r.Properties);
  return found;
}

/**
 * The wildcards AWS requires, each with why. Anything else with a `*` action or a `*` resource fails.
 * - CloudWatch Logs delivery for the state machine's logs: CloudWatch Logs asks for `*` on these (the
 *   vended-logs setup describes and updates account-wide resource policies,
 *   https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AWS-logs-infrastructure-CWL.html).
 * - X-Ray tracing of the state machine: PutTraceSegments and friends define no resource type, so IAM only
 *   accepts `*` (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html).
 * - CDK's auto-delete custom resource (removalPolicy destroy only): the bucket policy lets its provider role
 *   list and delete the objects of that one bucket so `cdk destroy` can remove it; actions are CDK's.
 */
const REQUIRED_WILDCARDS: { id: RegExp; actions: RegExp; resource: RegExp }[] = [
  {
    id: /^InletBackfillStateMachineRole/,
    actions:
      /^logs:(CreateLogDelivery|GetLogDelivery|UpdateLogDelivery|DeleteLogDelivery|ListLogDeliveries|PutResourcePolicy|DescribeResourcePolicies|DescribeLogGroups)$/,
    resource: /^\*$/,
  },
  {
    id: /^InletBackfillStateMachineRole/,
    actions: /^xray:(PutTraceSegments|PutTelemetryRecords|GetSamplingRules|GetSamplingTargets)$/,
    resource: /^\*$/,
  },
  {
    id: /^InletState(Landing|Manifests)Policy/,
    actions: /^s3:(GetBucket\*|List\*|DeleteObject\*)$/,
    resource: /^(Landing|Manifests)(\/\*)?$/,
  },
];

/** The sink's DynamoDB statements, as `actions conditions`, sorted. */
function sinkLedgerGrants(resources: ReturnType<typeof synth>): string[] {
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && /BronzeSinkQueue/.test(JSON.stringify(r)))
    .flatMap(
      (r) =>
        (r.Properties as { PolicyDocument: { Statement: Array<Record<string, unknown>> } }).PolicyDocument
          .Statement,
    )
    .filter((s) => [s.Action].flat().some((a) => String(a).startsWith('dynamodb:')))
    .map((s) => `${[s.Action].flat().join(',')} ${JSON.stringify(s.Condition)}`)
    .sort();
}

const VARIANTS: Record<string, Partial<InletStackProps>> = {
  default: {},
  'eventbridge, reconcile, destroy': {
    landingBucketName: 'existing-landing',
    pipeline: { reconcile: { every: Duration.hours(1) }, removalPolicy: RemovalPolicy.DESTROY },
  },
  'created bucket, destroy': { pipeline: { removalPolicy: RemovalPolicy.DESTROY } },
  'inventory buckets': { pipeline: { backfill: { inventoryBuckets: ['inv-reports', 'inv-archive'] } } },
};

describe('IAM', () => {
  for (const [name, props] of Object.entries(VARIANTS)) {
    it(`has no wildcard action or resource but the ones AWS requires: ${name}`, () => {
      const wild = allows(synth(props)).filter((a) => a.action.includes('*') || a.resource === '*');
      const unexplained = wild.filter(
        (w) =>
          !REQUIRED_WILDCARDS.some(
            (r) => r.id.test(w.id) && r.actions.test(w.action) && r.resource.test(w.resource),
          ),
      );
      expect(unexplained).toEqual([]);
    });
  }

  const ofFunction = (grants: ReturnType<typeof allows>, fn: string) =>
    grants
      .filter((g) => g.id.startsWith(`InletFunctions${fn}ServiceRoleDefaultPolicy`))
      .map((g) => `${g.action} ${g.resource}`)
      .sort();

  it('lets the backfill read the objects of the inventory buckets it is given, and of no other bucket', () => {
    const read = (props: Partial<InletStackProps>) =>
      ofFunction(allows(synth(props)), 'Backfill').filter((g) => g.startsWith('s3:GetObject'));
    expect(read({})).toEqual([]);
    expect(
      read({ pipeline: { backfill: { inventoryBuckets: ['inv-reports', 'inv-archive', 'inv-reports'] } } }),
    ).toEqual([
      's3:GetObject arn:<AWS::Partition>:s3:::inv-archive/*',
      's3:GetObject arn:<AWS::Partition>:s3:::inv-reports/*',
    ]);
    // Reading reports is all: no listing, no writes, nothing on the landing bucket beyond what it had.
    const withInventory = ofFunction(
      allows(synth({ pipeline: { backfill: { inventoryBuckets: ['inv-reports'] } } })),
      'Backfill',
    );
    expect(withInventory.filter((g) => !g.startsWith('s3:GetObject'))).toEqual(
      ofFunction(allows(synth()), 'Backfill'),
    );
  });

  it('grants each function exactly what its protocol steps use', () => {
    const grants = allows(synth());
    const of = (fn: string) =>
      grants
        .filter((g) => g.id.startsWith(`InletFunctions${fn}ServiceRoleDefaultPolicy`))
        .map((g) => `${g.action} ${g.resource}`)
        .sort();
    const queueConsumer = (queue: string) =>
      ['ReceiveMessage', 'ChangeMessageVisibility', 'GetQueueUrl', 'DeleteMessage', 'GetQueueAttributes'].map(
        (a) => `sqs:${a} ${queue}`,
      );
    const sender = (queue: string) =>
      ['SendMessage', 'GetQueueAttributes', 'GetQueueUrl'].map((a) => `sqs:${a} ${queue}`);
    expect(of('Batcher')).toEqual(
      [
        ...queueConsumer('IngestQueue'),
        'dynamodb:PutItem Ledger',
        'dynamodb:GetItem Ledger',
        'dynamodb:UpdateItem Ledger',
        's3:PutObject Manifests/_staging/*',
        ...sender('CommitQueue'),
      ].sort(),
    );
    expect(of('Committer')).toEqual(
      [
        ...queueConsumer('CommitQueue'),
        'dynamodb:GetItem Ledger',
        'dynamodb:UpdateItem Ledger',
        'dynamodb:ConditionCheckItem Ledger',
        // Group commit reads the table's other waiting batches from the sealed index.
        'dynamodb:Query Ledger/index/sealed',
        's3:GetObject Manifests/_staging/*',
        's3:DeleteObject Manifests/_staging/*',
        's3:PutObject Manifests/*/_manifests/*',
        's3:GetObject Manifests/*/_manifests/*',
        // Without ListBucket, S3 answers a missing key with 403, not 404: the manifest-ahead check (C2) and
        // the missing staged list would fail on every commit (moto answers 404 whatever the policy says).
        's3:ListBucket Manifests',
        'events:PutEvents arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default',
      ].sort(),
    );
    expect(of('Sweeper')).toEqual(
      ['dynamodb:Scan Ledger/index/sealed', 'dynamodb:GetItem Ledger', ...sender('CommitQueue')].sort(),
    );
    expect(of('Backfill')).toEqual(
      [
        's3:ListBucket Landing',
        's3:ListBucketVersions Landing',
        'dynamodb:BatchGetItem Ledger',
        ...sender('IngestQueue'),
      ].sort(),
    );
  });

  it("lets the bronze sink read landing files only under its tables' prefixes", () => {
    const sinkReads = (tables: InletStackProps['tables']) =>
      allows(synth({ tables }))
        .filter((g) => /^InletBronze.*ServiceRoleDefaultPolicy/.test(g.id))
        .filter((g) => /^s3:GetObject(Version)?$/.test(g.action) && !/Manifests|_bronze/.test(g.resource))
        .map((g) => `${g.action} ${g.resource}`)
        .sort();
    // A table's files are under its prefix (routing), in the landing bucket or the table's own bucket; a
    // table without a sink (clicks) is not read.
    expect(
      sinkReads([
        { name: 'orders', prefix: 'orders/', bronze: { format: 'json' } },
        { name: 'clicks', prefix: 'clicks/' },
        // `bucket` is a config field (shared/config/pipeline-config.ts) the construct's props do not declare.
        { name: 'logs', prefix: 'app/', bucket: 'other-landing', bronze: { format: 'json' } } as never,
      ]),
    ).toEqual(
      [
        's3:GetObject Landing/orders/*',
        's3:GetObjectVersion Landing/orders/*',
        's3:GetObject arn:<AWS::Partition>:s3:::other-landing/app/*',
        's3:GetObjectVersion arn:<AWS::Partition>:s3:::other-landing/app/*',
      ].sort(),
    );
  });

  it('lets the bronze sink list the manifest bucket even when every bronze table has its own location', () => {
    // Without ListBucket a GET of the next manifest, not yet written, answers 403 instead of 404 (GetObject,
    // Permissions): every catch-up would fail at its end and never clean.
    const sinkLists = (tables: InletStackProps['tables']) =>
      allows(synth({ tables }))
        .filter((g) => /^InletBronze.*ServiceRoleDefaultPolicy/.test(g.id) && g.action === 's3:ListBucket')
        .map((g) => g.resource)
        .sort();
    expect(
      sinkLists([{ name: 'orders', prefix: 'orders/', bronze: { format: 'json', location: 's3://lake/o' } }]),
    ).toEqual(['Landing', 'Manifests', 'arn:<AWS::Partition>:s3:::lake'].sort());
    expect(sinkLists([{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }])).toEqual([
      'Landing',
      'Manifests',
    ]);
  });

  it('gives the bronze sink delete (and archive writes) only under the tables with cleanSource', () => {
    const grants = allows(
      synth({
        tables: [
          { name: 'orders', prefix: 'orders/', bronze: { format: 'json' } },
          {
            name: 'clicks',
            prefix: 'clicks/',
            bronze: { format: 'csv', cleanSource: { action: 'move', moveTo: 's3://archive/old' } },
          },
          { name: 'views', prefix: 'views/', bronze: { format: 'csv', cleanSource: { action: 'delete' } } },
        ],
      }),
    );
    const sink = grants.filter((g) => /^InletBronze.*ServiceRoleDefaultPolicy/.test(g.id));
    const cleaning = sink
      .filter(
        (g) => /^s3:(Delete|PutObject|Abort|Get\w*Tagging)/.test(g.action) && !g.resource.includes('_bronze'),
      )
      .map((g) => `${g.action} ${g.resource}`)
      .sort();
    expect(cleaning).toEqual(
      [
        's3:DeleteObject Landing/clicks/*',
        's3:DeleteObjectVersion Landing/clicks/*',
        's3:DeleteObject Landing/views/*',
        's3:DeleteObjectVersion Landing/views/*',
        's3:PutObject arn:<AWS::Partition>:s3:::archive/old/*',
        // A move over 5 GB is a multipart copy, aborted when it fails.
        's3:AbortMultipartUpload arn:<AWS::Partition>:s3:::archive/old/*',
        // A move keeps the source's tags: read them (of a version too) from the moved table's files only,
        // write them on the archive copy. A delete-only table gets neither.
        's3:GetObjectTagging Landing/clicks/*',
        's3:GetObjectVersionTagging Landing/clicks/*',
        's3:PutObjectTagging arn:<AWS::Partition>:s3:::archive/old/*',
      ].sort(),
    );
    expect(
      allows(synth({ tables: [{ name: 'o', prefix: 'o/', bronze: { format: 'json' } }] })).filter(
        (g) => g.action.startsWith('s3:Delete') && /^InletBronze/.test(g.id),
      ),
    ).toEqual([]);
  });

  it("lets a cleanSource table's sink read another table's claims, only of the tables that route its files", () => {
    const ledgerGrants = (tables: InletStackProps['tables']) => sinkLedgerGrants(synth({ tables }));
    const clean = { action: 'move', moveTo: 's3://archive/old', retentionDays: 0 } as const;
    // Each file of `orders` is removed only once `audit` holds it: its FILE and BATCH items, read-only.
    expect(
      ledgerGrants([
        { name: 'orders', prefix: 'orders/', bronze: { format: 'json', cleanSource: clean } },
        { name: 'audit', prefix: 'orders/', bronze: { format: 'json' } },
        { name: 'clicks', prefix: 'clicks/', bronze: { format: 'json' } },
      ]),
    ).toEqual([
      'dynamodb:GetItem {"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["FILE#audit#*","BATCH#audit#*"]}}',
      'dynamodb:GetItem {"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["TABLE#*"]}}',
      'dynamodb:GetItem,dynamodb:PutItem {"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["SINK#*"]}}',
    ]);
    expect(
      ledgerGrants([
        { name: 'orders', prefix: 'orders/', bronze: { format: 'json', cleanSource: clean } },
        { name: 'clicks', prefix: 'clicks/', bronze: { format: 'json' } },
      ]).some((g) => g.includes('FILE#')),
    ).toBe(false);
  });

  it('gives the bronze sink SQS actions on its own queue only: consume (the lease and backoff change visibility) and its nudges', () => {
    const resources = synth({ tables: [{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }] });
    const sqs = allows(resources)
      .filter((g) => /^InletBronzeSinkServiceRoleDefaultPolicy/.test(g.id) && g.action.startsWith('sqs:'))
      .map((g) => `${g.action} ${g.resource}`)
      .sort();
    // The event source's grantConsumeMessages holds sqs:ChangeMessageVisibility, which the visibility lease
    // (at the start of each run and every 20 s) and a failed table's backoff call: nothing to add. CDK merges
    // it with the send grant (its nudges) into one statement.
    expect(sqs).toEqual(
      [
        'ChangeMessageVisibility',
        'DeleteMessage',
        'GetQueueAttributes',
        'GetQueueUrl',
        'ReceiveMessage',
        'SendMessage',
      ]
        .map((a) => `sqs:${a} BronzeSinkQueue`)
        .sort(),
    );
  });

  it("lets the nudge schedules only send to the sink queue, and the sink only read tables' heads", () => {
    const resources = synth({ tables: [{ name: 'orders', prefix: 'orders/', bronze: { format: 'json' } }] });
    const grants = allows(resources);
    const scheduler = grants.filter((g) => /^SchedulerRoleForTarget/.test(g.id));
    expect(scheduler.map((g) => `${g.action} ${g.resource}`)).toEqual(['sqs:SendMessage BronzeSinkQueue']);
    // The role trusts Scheduler for this account's nudge group only, not every schedule of the account.
    const [role] = Object.values(resources).filter(
      (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r).includes('scheduler.amazonaws.com'),
    );
    expect(JSON.stringify(role)).toMatch(
      /"aws:SourceArn":\{"Fn::GetAtt":\["InletBronzeNudgeSchedules[0-9A-F]{8}","Arn"\]\}/,
    );
    expect(JSON.stringify(role)).toContain('"aws:SourceAccount":{"Ref":"AWS::AccountId"}');
    // The ledger: its own cursor items read and written; the protocol's TABLE items read, nothing else.
    expect(sinkLedgerGrants(resources)).toEqual([
      'dynamodb:GetItem {"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["TABLE#*"]}}',
      'dynamodb:GetItem,dynamodb:PutItem {"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["SINK#*"]}}',
    ]);
  });
});

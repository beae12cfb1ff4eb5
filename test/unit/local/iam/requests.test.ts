// The IAM check's mapping of HTTP requests to what AWS authorizes (Service Authorization Reference), and its
// evaluation of the sink's leading-key conditions.
import { describe, expect, it } from 'vitest';
import type { BoundStack } from '../../../../local/iam/policies.ts';
import { IamCheck } from '../../../../local/iam/proxy.ts';
import { type AwsHttpRequest, mapRequest, UnmappedRequestError } from '../../../../local/iam/requests.ts';

const base = { region: 'us-east-1', account: '123456789012', headers: {}, body: Buffer.alloc(0) };
const s3 = (method: string, url: string, headers: Record<string, string> = {}): AwsHttpRequest => ({
  ...base,
  service: 's3',
  method,
  url,
  headers,
});
const json = (service: string, target: string, body: unknown): AwsHttpRequest => ({
  ...base,
  service,
  method: 'POST',
  url: '/',
  headers: { 'x-amz-target': target },
  body: Buffer.from(JSON.stringify(body)),
});
const authz = (r: AwsHttpRequest) =>
  mapRequest(r).authz.map((a) => `${a.action} ${a.resource} ${JSON.stringify(a.context)}`);

describe('IAM check: S3 requests', () => {
  it('reads of an object (and of a version) are GetObject[Version], 404-or-403 by ListBucket', () => {
    expect(authz(s3('GET', '/b/a%20b%2Bc.json?x-id=GetObject'))).toEqual([
      's3:GetObject arn:aws:s3:::b/a b+c.json {}',
    ]);
    const head = mapRequest(s3('HEAD', '/b/k?versionId=v1'));
    expect(head.authz[0]).toMatchObject({ action: 's3:GetObjectVersion', context: { 's3:versionid': 'v1' } });
    expect(head.missingKeyNeedsList).toEqual({ bucket: 'b' });
  });

  it('listings are ListBucket / ListBucketVersions on the bucket with s3:prefix', () => {
    expect(authz(s3('GET', '/b?list-type=2&prefix=orders%2F&max-keys=5'))).toEqual([
      's3:ListBucket arn:aws:s3:::b {"s3:prefix":"orders/","s3:max-keys":"5"}',
    ]);
    expect(mapRequest(s3('GET', '/b?versions&prefix=x')).authz[0]?.action).toBe('s3:ListBucketVersions');
  });

  it('a CopyObject writes the copy and reads the source (its version), a multipart copy too; tags cost PutObjectTagging', () => {
    const copy = mapRequest(
      s3('PUT', '/arch/old/k?x-id=CopyObject', { 'x-amz-copy-source': 'land/k%20x?versionId=v2' }),
    );
    expect(copy.authz.map((a) => `${a.action} ${a.resource}`)).toEqual([
      's3:PutObject arn:aws:s3:::arch/old/k',
      's3:GetObjectVersion arn:aws:s3:::land/k x',
    ]);
    expect(copy.copiesTagsOf).toEqual({ bucket: 'land', key: 'k x', versionId: 'v2' });
    expect(
      authz(s3('POST', '/arch/k?uploads', { 'x-amz-tagging': 'a=b' })).map((a) => a.split(' ')[0]),
    ).toEqual(['s3:PutObject', 's3:PutObjectTagging']);
    expect(
      mapRequest(s3('PUT', '/arch/k?partNumber=2&uploadId=u', { 'x-amz-copy-source': '/land/k' })).operation,
    ).toBe('s3:UploadPartCopy');
    expect(authz(s3('DELETE', '/arch/k?uploadId=u'))[0]).toMatch(/^s3:AbortMultipartUpload /);
    expect(authz(s3('DELETE', '/land/k?versionId=v1'))[0]).toMatch(
      /^s3:DeleteObjectVersion .*"s3:versionid":"v1"/,
    );
  });

  it('a delete conditional on an ETag also needs GetObject (cleanSource), as S3 conditional deletes do', () => {
    // https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-delete-enforce.html: "conditional
    // deletes with a specific ETag value require both s3:DeleteObject and s3:GetObject permissions".
    expect(authz(s3('DELETE', '/land/k?x-id=DeleteObject', { 'if-match': '"e1"' }))).toEqual([
      's3:DeleteObject arn:aws:s3:::land/k {}',
      's3:GetObject arn:aws:s3:::land/k {}',
    ]);
    expect(authz(s3('DELETE', '/land/k?x-id=DeleteObject'))).toEqual([
      's3:DeleteObject arn:aws:s3:::land/k {}',
    ]);
  });

  it('refuses what it cannot map instead of letting it through', () => {
    expect(() => mapRequest(s3('POST', '/b?delete'))).toThrow(UnmappedRequestError);
    expect(() => mapRequest({ ...s3('GET', '/'), service: 'kms' })).toThrow(/service 'kms'/);
  });
});

describe('IAM check: DynamoDB, SQS, EventBridge requests', () => {
  it('a transaction is each item on its own action; a Query on an index is on the index', () => {
    const t = mapRequest(
      json('dynamodb', 'DynamoDB_20120810.TransactWriteItems', {
        TransactItems: [
          { ConditionCheck: { TableName: 'L', Key: { pk: { S: 'BATCH#a' } } } },
          { Update: { TableName: 'L', Key: { pk: { S: 'TABLE#t' } } } },
        ],
      }),
    );
    expect(t.authz.map((a) => a.action)).toEqual(['dynamodb:ConditionCheckItem', 'dynamodb:UpdateItem']);
    const q = mapRequest(
      json('dynamodb', 'DynamoDB_20120810.Query', { TableName: 'L', IndexName: 'sealed' }),
    );
    expect(q.authz[0]?.resource).toBe('arn:aws:dynamodb:us-east-1:123456789012:table/L/index/sealed');
  });

  it('SQS in both protocols: batches as their single action, queues by URL, GetQueueUrl by name', () => {
    const url = 'http://127.0.0.1:5000/123456789012/commit.fifo';
    expect(authz(json('sqs', 'AmazonSQS.SendMessageBatch', { QueueUrl: url, Entries: [] }))).toEqual([
      'sqs:SendMessage arn:aws:sqs:us-east-1:123456789012:commit.fifo {}',
    ]);
    const query = { ...base, service: 'sqs', method: 'POST', url: '/', headers: {} };
    expect(
      authz({ ...query, body: Buffer.from(`Action=DeleteMessageBatch&QueueUrl=${encodeURIComponent(url)}`) }),
    ).toEqual(['sqs:DeleteMessage arn:aws:sqs:us-east-1:123456789012:commit.fifo {}']);
    expect(authz(json('sqs', 'AmazonSQS.GetQueueUrl', { QueueName: 'q' }))[0]).toMatch(
      /^sqs:GetQueueUrl arn:aws:sqs:us-east-1:123456789012:q /,
    );
  });

  it('PutEvents is per bus with events:source and events:detail-type', () => {
    expect(
      authz(
        json('events', 'AWSEvents.PutEvents', {
          Entries: [{ Source: 'inlet', DetailType: 'BatchCommitted' }],
        }),
      ),
    ).toEqual([
      'events:PutEvents arn:aws:events:us-east-1:123456789012:event-bus/default {"events:source":"inlet","events:detail-type":"BatchCommitted"}',
    ]);
  });
});

describe('IAM check: dynamodb:LeadingKeys', () => {
  const stack: BoundStack = {
    account: '123456789012',
    region: 'us-east-1',
    resourcePolicies: {},
    partitionKeys: { L: 'pk' },
    roles: {
      Sink: {
        name: 'SinkRole',
        arn: 'arn:aws:iam::123456789012:role/SinkRole',
        grants: { S0: 'cursors' },
        policy: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'S0',
              Effect: 'Allow',
              Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
              Resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/L',
              Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SINK#*'] } },
            },
          ],
        },
      },
    },
  };

  it("lets the sink read and write its cursor items only, from each request's own keys", async () => {
    const check = new IamCheck();
    check.register({ label: 'unit', stack });
    const caller = check.caller('ASIAINLET0001SINK');
    if (!caller) throw new Error('no caller');
    const get = (pk: string) =>
      mapRequest(json('dynamodb', 'DynamoDB_20120810.GetItem', { TableName: 'L', Key: { pk: { S: pk } } }))
        .authz;
    expect((await check.authorize(caller, 'dynamodb:GetItem', get('SINK#orders'))).denied).toBeUndefined();
    const refused = await check.authorize(caller, 'dynamodb:GetItem', get('FILE#orders#k'));
    expect(refused.denied?.record).toMatchObject({
      action: 'dynamodb:GetItem',
      context: { 'dynamodb:LeadingKeys': ['FILE#orders#k'] },
      result: 'ImplicitlyDenied',
    });
    expect(check.records.map((r) => r.allowedBy)).toEqual([['S0'], []]);
  });
});

describe('IAM check: the mutation report', () => {
  it('calls a statement needed only when a request was allowed by it alone, and lists what was never called', async () => {
    const { analyze, markdownTable } = await import('../../../../local/iam/report.ts');
    const check = new IamCheck();
    const stack: BoundStack = {
      account: '123456789012',
      region: 'us-east-1',
      resourcePolicies: {},
      partitionKeys: {},
      roles: {
        Batcher: {
          name: 'BatcherRole',
          arn: 'arn:aws:iam::123456789012:role/BatcherRole',
          grants: {
            S0: 's3:PutObject on Manifests/_staging/*',
            S1: 's3:GetObject, s3:PutObject on Manifests/*',
          },
          policy: {
            Version: '2012-10-17',
            Statement: [
              { Sid: 'S0', Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::m/_staging/*' },
              {
                Sid: 'S1',
                Effect: 'Allow',
                Action: ['s3:GetObject', 's3:PutObject'],
                Resource: 'arn:aws:s3:::m/*',
              },
            ],
          },
        },
      },
    };
    check.register({ label: 'unit', stack });
    const caller = check.caller('ASIAINLET0001BATCHER');
    if (!caller) throw new Error('no caller');
    // Allowed by both statements: neither is needed by it. A GET outside _staging needs S1 alone.
    await check.authorize(caller, 's3:PutObject', [
      { action: 's3:PutObject', resource: 'arn:aws:s3:::m/_staging/a', context: {} },
    ]);
    const report = analyze(check);
    expect(report.unneeded.map((g) => g.statement)).toEqual([
      's3:PutObject on Manifests/_staging/*',
      's3:GetObject, s3:PutObject on Manifests/*',
    ]);
    await check.authorize(caller, 's3:GetObject', [
      { action: 's3:GetObject', resource: 'arn:aws:s3:::m/x', context: {} },
    ]);
    expect(analyze(check).unneeded.map((g) => g.statement)).toEqual(['s3:PutObject on Manifests/_staging/*']);
    expect(markdownTable(analyze(check))).toContain(
      '| Batcher | s3:GetObject, s3:PutObject | — | 2 | 1 | 0 |',
    );
  });
});

describe('IAM check: Glue requests', () => {
  it('a table call is authorized on the catalog, the database and the table, lowercase', () => {
    const arn = (r: string) => `arn:aws:glue:us-east-1:123456789012:${r}`;
    expect(authz(json('glue', 'AWSGlue.GetTable', { DatabaseName: 'Lake_Bronze', Name: 'orders' }))).toEqual([
      `glue:GetTable ${arn('catalog')} {}`,
      `glue:GetTable ${arn('database/lake_bronze')} {}`,
      `glue:GetTable ${arn('table/lake_bronze/orders')} {}`,
    ]);
    for (const op of ['CreateTable', 'UpdateTable'])
      expect(
        authz(json('glue', `AWSGlue.${op}`, { DatabaseName: 'db', TableInput: { Name: 'Orders' } }))[2],
      ).toBe(`glue:${op} ${arn('table/db/orders')} {}`);
    expect(() => mapRequest(json('glue', 'AWSGlue.DeleteTable', { DatabaseName: 'db', Name: 't' }))).toThrow(
      UnmappedRequestError,
    );
  });
});

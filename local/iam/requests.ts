/**
 * An HTTP request to AWS, as the IAM authorization AWS performs for it: each action, the resource ARN it is
 * authorized on and the condition keys AWS sets, per the Service Authorization Reference
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html, ..._amazondynamodb.html,
 * ..._amazonsqs.html, ..._amazoneventbridge.html, ..._awsglue.html). Only the operations Inlet's functions make are mapped;
 * anything else is refused (UnmappedRequestError) rather than let through unchecked.
 */
import type { AuthzRequest } from './evaluator.ts';

export interface AwsHttpRequest {
  readonly service: string;
  readonly method: string;
  /** Path and query as received (path-style S3: `/bucket/key?uploads`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly region: string;
  readonly account: string;
}

export interface MappedRequest {
  /** `s3:GetObject`, `dynamodb:TransactWriteItems`, `sqs:ReceiveMessage`: the API operation, for the record. */
  readonly operation: string;
  readonly authz: AuthzRequest[];
  /**
   * A GET or HEAD of one object: S3 answers a missing key with 404 only to a caller allowed `s3:ListBucket`
   * on the bucket, otherwise 403 (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
   * "Permissions").
   */
  readonly missingKeyNeedsList?: { readonly bucket: string };
  /** CopyObject with the default COPY tagging directive: needs the source's tags to know what it reads. */
  readonly copiesTagsOf?: { readonly bucket: string; readonly key: string; readonly versionId?: string };
}

export class UnmappedRequestError extends Error {
  constructor(message: string) {
    super(`IAM check: cannot map ${message}; add it to local/iam/requests.ts rather than let it through`);
    this.name = 'UnmappedRequestError';
  }
}

const header = (r: AwsHttpRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function mapRequest(r: AwsHttpRequest): MappedRequest {
  switch (r.service) {
    case 's3':
      return mapS3(r);
    case 'dynamodb':
      return mapDynamoDb(r);
    case 'sqs':
      return mapSqs(r);
    case 'events':
      return mapEvents(r);
    case 'glue':
      return mapGlue(r);
    default:
      throw new UnmappedRequestError(`a request to service '${r.service}' (${r.method} ${r.url})`);
  }
}

/** S3 REST, path style (the emulator's clients use forcePathStyle). */
function mapS3(r: AwsHttpRequest): MappedRequest {
  const url = new URL(r.url, 'http://local');
  const q = url.searchParams;
  const [bucket = '', ...rest] = url.pathname.slice(1).split('/');
  const key = rest.map(decodeURIComponent).join('/');
  const bucketArn = `arn:aws:s3:::${bucket}`;
  const objectArn = `${bucketArn}/${key}`;
  const versionId = q.get('versionId') ?? undefined;
  const versioned = versionId ? { 's3:versionid': versionId } : {};
  const one = (operation: string, action: string, resource: string, context = {}): MappedRequest => ({
    operation,
    authz: [{ action, resource, context }],
  });
  const tagging = header(r, 'x-amz-tagging');
  const withTags = (m: MappedRequest): MappedRequest =>
    tagging
      ? { ...m, authz: [...m.authz, { action: 's3:PutObjectTagging', resource: objectArn, context: {} }] }
      : m;
  if (!bucket) throw new UnmappedRequestError(`S3 ${r.method} ${r.url} (no bucket)`);
  if (rest.length === 0 || key === '') {
    const listing = {
      ...(q.has('prefix') ? { 's3:prefix': q.get('prefix') ?? '' } : {}),
      ...(q.has('delimiter') ? { 's3:delimiter': q.get('delimiter') ?? '' } : {}),
      ...(q.has('max-keys') ? { 's3:max-keys': q.get('max-keys') ?? '' } : {}),
    };
    if (r.method === 'GET' && q.has('versions'))
      return one('s3:ListObjectVersions', 's3:ListBucketVersions', bucketArn, listing);
    if (
      r.method === 'GET' &&
      [...q.keys()].every((k) =>
        [
          'list-type',
          'prefix',
          'delimiter',
          'max-keys',
          'continuation-token',
          'start-after',
          'encoding-type',
          'marker',
          'fetch-owner',
        ].includes(k),
      )
    )
      return one('s3:ListObjectsV2', 's3:ListBucket', bucketArn, listing);
    throw new UnmappedRequestError(`S3 bucket request ${r.method} ${r.url}`);
  }
  const source = header(r, 'x-amz-copy-source');
  if (r.method === 'GET' && q.has('tagging'))
    return one(
      's3:GetObjectTagging',
      versionId ? 's3:GetObjectVersionTagging' : 's3:GetObjectTagging',
      objectArn,
      versioned,
    );
  if (r.method === 'PUT' && q.has('tagging'))
    return one('s3:PutObjectTagging', 's3:PutObjectTagging', objectArn);
  if (
    (r.method === 'GET' || r.method === 'HEAD') &&
    [...q.keys()].every((k) => ['versionId', 'partNumber', 'x-id'].includes(k))
  )
    return {
      ...one(
        r.method === 'GET' ? 's3:GetObject' : 's3:HeadObject',
        versionId ? 's3:GetObjectVersion' : 's3:GetObject',
        objectArn,
        versioned,
      ),
      missingKeyNeedsList: { bucket },
    };
  if (r.method === 'PUT' && source) {
    const from = parseCopySource(source);
    const read: AuthzRequest = {
      action: from.versionId ? 's3:GetObjectVersion' : 's3:GetObject',
      resource: `arn:aws:s3:::${from.bucket}/${from.key}`,
      context: from.versionId ? { 's3:versionid': from.versionId } : {},
    };
    const write: AuthzRequest = { action: 's3:PutObject', resource: objectArn, context: {} };
    if (q.has('uploadId')) return { operation: 's3:UploadPartCopy', authz: [write, read] };
    const directive = header(r, 'x-amz-tagging-directive') ?? 'COPY';
    const copy: MappedRequest = { operation: 's3:CopyObject', authz: [write, read] };
    if (directive === 'REPLACE') return withTags(copy);
    return { ...copy, copiesTagsOf: from };
  }
  if (r.method === 'PUT' && q.has('uploadId')) return one('s3:UploadPart', 's3:PutObject', objectArn);
  if (r.method === 'PUT' && [...q.keys()].every((k) => k === 'x-id'))
    return withTags(one('s3:PutObject', 's3:PutObject', objectArn));
  if (r.method === 'POST' && q.has('uploads'))
    return withTags(one('s3:CreateMultipartUpload', 's3:PutObject', objectArn));
  if (r.method === 'POST' && q.has('uploadId'))
    return one('s3:CompleteMultipartUpload', 's3:PutObject', objectArn);
  if (r.method === 'DELETE' && q.has('uploadId'))
    return one('s3:AbortMultipartUpload', 's3:AbortMultipartUpload', objectArn);
  if (r.method === 'DELETE' && [...q.keys()].every((k) => ['versionId', 'x-id'].includes(k))) {
    const deletion = one(
      's3:DeleteObject',
      versionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject',
      objectArn,
      versioned,
    );
    // "Conditional deletes with a specific ETag value require both s3:DeleteObject and s3:GetObject
    // permissions" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-delete-enforce.html).
    const ifMatch = header(r, 'if-match');
    if (ifMatch === undefined || ifMatch === '*') return deletion;
    return {
      ...deletion,
      authz: [...deletion.authz, { action: 's3:GetObject', resource: objectArn, context: {} }],
    };
  }
  throw new UnmappedRequestError(`S3 object request ${r.method} ${r.url}`);
}

/** `x-amz-copy-source`: `bucket/key[?versionId=v]`, URL-encoded, with or without a leading slash. */
export function parseCopySource(value: string): { bucket: string; key: string; versionId?: string } {
  const [path = '', query = ''] = value.replace(/^\//, '').split('?');
  const [bucket = '', ...key] = path.split('/');
  const versionId = new URLSearchParams(query).get('versionId') ?? undefined;
  return { bucket, key: decodeURIComponent(key.join('/')), ...(versionId ? { versionId } : {}) };
}

type Json = Record<string, unknown>;
type AttributeValue = Record<string, unknown>;

const scalar = (v: AttributeValue | undefined): string | undefined => {
  if (!v) return undefined;
  const [type, value] = Object.entries(v)[0] ?? [];
  return type === 'S' || type === 'N' || type === 'B' ? String(value) : undefined;
};

/** DynamoDB JSON (X-Amz-Target: DynamoDB_20120810.<Operation>). */
function mapDynamoDb(r: AwsHttpRequest): MappedRequest {
  const target = header(r, 'x-amz-target') ?? '';
  const operation = target.split('.')[1] ?? '';
  const body = JSON.parse(r.body.toString('utf8') || '{}') as Json;
  const tableArn = (name: string, index?: string) =>
    `arn:aws:dynamodb:${r.region}:${r.account}:table/${name}${index ? `/index/${index}` : ''}`;
  const options = (b: Json) => ({
    ...(b.ReturnValues ? { 'dynamodb:ReturnValues': String(b.ReturnValues) } : {}),
    ...(b.Select ? { 'dynamodb:Select': String(b.Select) } : {}),
    ...(b.ReturnConsumedCapacity
      ? { 'dynamodb:ReturnConsumedCapacity': String(b.ReturnConsumedCapacity) }
      : {}),
  });
  // dynamodb:LeadingKeys is the partition key values a request touches; the proxy fills them in (it knows
  // each table's key schema) from these items and keys.
  const item = (action: string, b: Json): AuthzRequest => ({
    action,
    resource: tableArn(String(b.TableName)),
    context: { ...options(b), ...leading([(b.Key ?? b.Item) as Json]) },
  });
  switch (operation) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return { operation: `dynamodb:${operation}`, authz: [item(`dynamodb:${operation}`, body)] };
    case 'Query':
    case 'Scan':
      return {
        operation: `dynamodb:${operation}`,
        authz: [
          {
            action: `dynamodb:${operation}`,
            resource: tableArn(String(body.TableName), body.IndexName as string | undefined),
            context: {
              ...options(body),
              ...(operation === 'Query' && !body.IndexName ? queryKeys(body) : {}),
            },
          },
        ],
      };
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return {
        operation: `dynamodb:${operation}`,
        authz: Object.entries(body.RequestItems as Record<string, unknown>).map(([table, value]) => {
          const keys =
            operation === 'BatchGetItem'
              ? ((value as { Keys: Json[] }).Keys ?? [])
              : (value as Json[]).map(
                  (w) => ((w.PutRequest as Json)?.Item ?? (w.DeleteRequest as Json)?.Key) as Json,
                );
          return { action: `dynamodb:${operation}`, resource: tableArn(table), context: leading(keys) };
        }),
      };
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      const actions: Record<string, string> = {
        Put: 'dynamodb:PutItem',
        Update: 'dynamodb:UpdateItem',
        Delete: 'dynamodb:DeleteItem',
        ConditionCheck: 'dynamodb:ConditionCheckItem',
        Get: 'dynamodb:GetItem',
      };
      return {
        operation: `dynamodb:${operation}`,
        authz: (body.TransactItems as Json[]).map((t) => {
          const [kind = '', inner] = Object.entries(t)[0] ?? [];
          const action = actions[kind];
          if (!action) throw new UnmappedRequestError(`DynamoDB ${operation} item ${kind}`);
          return item(action, inner as Json);
        }),
      };
    }
    default:
      throw new UnmappedRequestError(`DynamoDB ${operation || target}`);
  }
}

/** A marker the proxy replaces with the partition key values, once it knows the table's partition key. */
export const LEADING_ITEMS = '__inletLeadingItems';

function leading(items: Json[]): Record<string, string[]> {
  return { [LEADING_ITEMS]: [JSON.stringify(items)] };
}

/** A Query's partition key value, from `#pk = :pk` in its KeyConditionExpression. */
function queryKeys(b: Json): Record<string, string[]> {
  const names = (b.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (b.ExpressionAttributeValues ?? {}) as Record<string, AttributeValue>;
  const item: Json = {};
  for (const part of String(b.KeyConditionExpression ?? '').split(/\s+AND\s+/i)) {
    const m = /^\s*\(?\s*([#\w]+)\s*=\s*(:\w+)\s*\)?\s*$/.exec(part);
    if (m?.[1] && m[2]) item[names[m[1]] ?? m[1]] = values[m[2]];
  }
  return leading([item]);
}

/** The partition key values of items, for `dynamodb:LeadingKeys`. */
export function leadingKeys(items: Json[], partitionKey: string): string[] {
  return [...new Set(items.flatMap((i) => scalar(i?.[partitionKey] as AttributeValue) ?? []))];
}

/** SQS, in the JSON protocol (X-Amz-Target: AmazonSQS.<Operation>) or the query protocol (Action=...). */
function mapSqs(r: AwsHttpRequest): MappedRequest {
  const target = header(r, 'x-amz-target');
  const text = r.body.toString('utf8');
  const body: Json = target
    ? (JSON.parse(text || '{}') as Json)
    : Object.fromEntries(new URLSearchParams(text || new URL(r.url, 'http://local').search));
  const operation = target ? (target.split('.')[1] ?? '') : String(body.Action ?? '');
  const queueArn = (url: string) => {
    const [account, name] = new URL(url, 'http://local').pathname.slice(1).split('/');
    return `arn:aws:sqs:${r.region}:${account}:${name}`;
  };
  const actions: Record<string, string> = {
    SendMessage: 'sqs:SendMessage',
    SendMessageBatch: 'sqs:SendMessage',
    ReceiveMessage: 'sqs:ReceiveMessage',
    DeleteMessage: 'sqs:DeleteMessage',
    DeleteMessageBatch: 'sqs:DeleteMessage',
    ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
    ChangeMessageVisibilityBatch: 'sqs:ChangeMessageVisibility',
    GetQueueAttributes: 'sqs:GetQueueAttributes',
  };
  if (operation === 'GetQueueUrl') {
    const account = String(body.QueueOwnerAWSAccountId ?? r.account);
    return {
      operation: 'sqs:GetQueueUrl',
      authz: [
        {
          action: 'sqs:GetQueueUrl',
          resource: `arn:aws:sqs:${r.region}:${account}:${body.QueueName}`,
          context: {},
        },
      ],
    };
  }
  const action = actions[operation];
  if (!action || !body.QueueUrl) throw new UnmappedRequestError(`SQS ${operation}`);
  return {
    operation: `sqs:${operation}`,
    authz: [{ action, resource: queueArn(String(body.QueueUrl)), context: {} }],
  };
}

/** EventBridge PutEvents: each entry on its bus, with `events:source` and `events:detail-type`. */
function mapEvents(r: AwsHttpRequest): MappedRequest {
  const operation = (header(r, 'x-amz-target') ?? '').split('.')[1] ?? '';
  if (operation !== 'PutEvents') throw new UnmappedRequestError(`EventBridge ${operation}`);
  const body = JSON.parse(r.body.toString('utf8')) as { Entries: Json[] };
  const seen = new Map<string, AuthzRequest>();
  for (const e of body.Entries) {
    const bus = String(e.EventBusName ?? 'default');
    const resource = bus.startsWith('arn:')
      ? bus
      : `arn:aws:events:${r.region}:${r.account}:event-bus/${bus}`;
    const context = { 'events:source': String(e.Source), 'events:detail-type': String(e.DetailType) };
    seen.set(JSON.stringify([resource, context]), { action: 'events:PutEvents', resource, context });
  }
  return { operation: 'events:PutEvents', authz: [...seen.values()] };
}

/**
 * Glue's table calls (X-Amz-Target: AWSGlue.<Operation>): each is authorized on the catalog, the database
 * and the table (https://docs.aws.amazon.com/glue/latest/dg/glue-specifying-resource-arns.html, "an action
 * on a table needs permission on the table, its database and the catalog"). Glue names are lowercase.
 */
function mapGlue(r: AwsHttpRequest): MappedRequest {
  const operation = (header(r, 'x-amz-target') ?? '').split('.')[1] ?? '';
  const body = JSON.parse(r.body.toString('utf8') || '{}') as Json;
  const tableOf: Record<string, (b: Json) => unknown> = {
    GetTable: (b) => b.Name,
    CreateTable: (b) => (b.TableInput as Json | undefined)?.Name,
    UpdateTable: (b) => (b.TableInput as Json | undefined)?.Name,
  };
  const table = tableOf[operation]?.(body);
  if (typeof table !== 'string' || typeof body.DatabaseName !== 'string')
    throw new UnmappedRequestError(`Glue ${operation}`);
  const arn = (resource: string) => `arn:aws:glue:${r.region}:${r.account}:${resource}`;
  const database = body.DatabaseName.toLowerCase();
  const action = `glue:${operation}`;
  return {
    operation: action,
    authz: [
      { action, resource: arn('catalog'), context: {} },
      { action, resource: arn(`database/${database}`), context: {} },
      { action, resource: arn(`table/${database}/${table.toLowerCase()}`), context: {} },
    ],
  };
}

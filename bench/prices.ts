// What AWS bills for a pipeline's requests: the list prices and the billing classes the bench prices counted
// requests in (docs/performance.md, "Prices"). Every dollar figure of the bench comes through here.
import type { RequestCounter } from '../test/support/request-counter.ts';

/** AWS list prices, us-east-1, on-demand, as published at the date below (not fetched: this machine is offline). */
export const PRICES = {
  date: '2026-11',
  region: 'us-east-1',
  sqsPerMillionRequests: 0.4,
  dynamodbPerMillionWriteUnits: 0.625,
  dynamodbPerMillionReadUnits: 0.125,
  // https://aws.amazon.com/dynamodb/pricing/provisioned/ (us-east-1): a write capacity unit-hour and a read
  // capacity unit-hour, for the provisioned ledger (`cost.provisionedLedger`).
  dynamodbPerWcuHour: 0.00065,
  dynamodbPerRcuHour: 0.00013,
  // https://aws.amazon.com/s3/pricing/ (Requests & data retrievals, S3 Standard): "PUT, COPY, POST, LIST
  // requests" at one rate, "GET, SELECT, and all other requests" at another; DELETE and CANCEL are free.
  s3PerThousandPutCopyPostList: 0.005,
  s3PerThousandGetAndOther: 0.0004,
  lambdaPerMillionInvocations: 0.2,
  // https://aws.amazon.com/lambda/pricing/ (Arm, the architecture every function is deployed on, first
  // 7.5 billion GB-seconds a month): duration, counted for the bronze sink only (`cost.bronze`).
  lambdaArmPerGbSecond: 0.0000133334,
  eventBridgePerMillionEvents: 1.0,
  stepFunctionsPerThousandTransitions: 0.025,
  note: 'Lambda GB-seconds are included for the bronze sink only (`cost.bronze`), storage nowhere; requests and invocations are. S3 DELETE and CANCEL (abort multipart) requests are free.',
};

/** What a pipeline asked of AWS for a run: the billed units the prices above apply to. */
export interface BilledUnits {
  readonly sqsRequests: number;
  readonly dynamodbWriteUnits: number;
  readonly dynamodbReadUnits: number;
  /** S3's first request class: PUT, COPY, POST and LIST (usage type `Requests-Tier1`). */
  readonly s3PutCopyPostListRequests: number;
  /** S3's second: GET, HEAD, SELECT and every other request not in the first (`Requests-Tier2`). */
  readonly s3GetAndOtherRequests: number;
  /** DELETE and CANCEL requests, which S3 does not bill: counted as requests, priced at nothing. */
  readonly s3FreeRequests: number;
  readonly lambdaInvocations: number;
  readonly eventBridgeEvents: number;
}

/** Those units at list prices, in dollars per million files, to the cent. */
export function usdPerMillionFiles(units: BilledUnits, files: number): number {
  const usd =
    (units.sqsRequests / 1e6) * PRICES.sqsPerMillionRequests +
    (units.dynamodbWriteUnits / 1e6) * PRICES.dynamodbPerMillionWriteUnits +
    (units.dynamodbReadUnits / 1e6) * PRICES.dynamodbPerMillionReadUnits +
    (units.s3PutCopyPostListRequests / 1e3) * PRICES.s3PerThousandPutCopyPostList +
    (units.s3GetAndOtherRequests / 1e3) * PRICES.s3PerThousandGetAndOther +
    (units.lambdaInvocations / 1e6) * PRICES.lambdaPerMillionInvocations +
    (units.eventBridgeEvents / 1e6) * PRICES.eventBridgePerMillionEvents;
  return Math.round((usd / files) * 1e6 * 100) / 100;
}

/**
 * S3 operations in the PUT, COPY, POST, LIST class: AWS's usage report names `Requests-Tier1` "the number of
 * PUT, COPY, POST, or LIST requests" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/aws-usage-report-understand.html);
 * a multipart write is a POST to start, a PUT per part (a copied part too) and a POST to complete.
 */
const S3_PUT_COPY_POST_LIST = new Set([
  'PutObject',
  'CopyObject',
  'CreateMultipartUpload',
  'UploadPart',
  'UploadPartCopy',
  'CompleteMultipartUpload',
  'PutObjectTagging',
  'ListObjects',
  'ListObjectsV2',
  'ListObjectVersions',
  'ListMultipartUploads',
  'ListParts',
  'ListBuckets',
]);
/** "DELETE and CANCEL requests are free" (the pricing page); a multi-object delete is a delete. */
const S3_FREE = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);

/** Each S3 request the counter saw, in the class S3 bills it in; anything not named above is a GET-class request. */
function s3Classes(c: RequestCounter) {
  let putCopyPostList = 0;
  let free = 0;
  for (const [name, n] of c.requests) {
    if (!name.startsWith('s3.')) continue;
    const operation = name.slice('s3.'.length);
    if (S3_PUT_COPY_POST_LIST.has(operation)) putCopyPostList += n;
    else if (S3_FREE.has(operation)) free += n;
  }
  return { putCopyPostList, free, other: c.total('s3.') - putCopyPostList - free };
}

/**
 * The billed units a request counter saw, plus S3's own send of each event to SQS (one request per event,
 * which no client of ours makes). DynamoDB write units count transactional items twice, as DynamoDB bills them.
 */
export function billedUnits(
  c: RequestCounter,
  sentEvents: number,
  lambdaInvocations: number,
  eventBridgeEvents: number,
): BilledUnits {
  const s3 = s3Classes(c);
  return {
    sqsRequests: c.total('sqs.') + sentEvents,
    dynamodbWriteUnits: c.dynamodbWriteItems + c.dynamodbTransactItems,
    dynamodbReadUnits: c.dynamodbReadItems + (c.requests.get('dynamodb.Query') ?? 0),
    s3PutCopyPostListRequests: s3.putCopyPostList,
    s3GetAndOtherRequests: s3.other,
    s3FreeRequests: s3.free,
    lambdaInvocations,
    eventBridgeEvents,
  };
}

/** `cost.requestsPerFile`'s shape (bench/README.md), for any pipeline's units. */
export function requestsPerFile(units: BilledUnits, files: number) {
  const perFile = (x: number) => Math.round((x / files) * 10_000) / 10_000;
  return {
    sqs: perFile(units.sqsRequests),
    dynamodbWriteUnits: perFile(units.dynamodbWriteUnits),
    dynamodbReadUnits: perFile(units.dynamodbReadUnits),
    s3: perFile(units.s3PutCopyPostListRequests + units.s3GetAndOtherRequests + units.s3FreeRequests),
    stepFunctions: 0,
    lambdaInvocations: perFile(units.lambdaInvocations),
    eventBridge: perFile(units.eventBridgeEvents),
  };
}

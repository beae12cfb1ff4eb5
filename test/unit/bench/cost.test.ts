// The bench's dollars per file: each counted S3 request is priced in the class AWS bills it in
// (https://aws.amazon.com/s3/pricing/, S3 Standard: PUT, COPY, POST, LIST at one rate; GET, SELECT and all
// other requests at another; DELETE and CANCEL free).
import { describe, expect, it } from 'vitest';
import { billedUnits, PRICES, requestsPerFile, usdPerMillionFiles } from '../../../bench/prices.ts';
import { provisionedUsdPerMillionFiles, STEADY_RATE } from '../../../bench/provisioned-ledger.ts';
import { RequestCounter } from '../../support/request-counter.ts';

function counted(requests: Record<string, number>): RequestCounter {
  const counter = new RequestCounter();
  for (const [name, n] of Object.entries(requests)) counter.requests.set(name, n);
  return counter;
}

const s3Units = (requests: Record<string, number>) => billedUnits(counted(requests), 0, 0, 0);

describe('billedUnits: S3 requests by billing class', () => {
  it('bills LIST requests at the PUT, COPY, POST, LIST rate, not the GET rate', () => {
    const units = s3Units({ 's3.ListObjectsV2': 7, 's3.ListObjectVersions': 2, 's3.ListParts': 1 });
    expect(units.s3PutCopyPostListRequests).toBe(10);
    expect(units.s3GetAndOtherRequests).toBe(0);
  });

  it('bills COPY and each step of a multipart write as PUT/POST, GET and HEAD at the GET rate', () => {
    const units = s3Units({
      's3.PutObject': 3,
      's3.CopyObject': 2,
      's3.CreateMultipartUpload': 1,
      's3.UploadPart': 4,
      's3.UploadPartCopy': 2,
      's3.CompleteMultipartUpload': 1,
      's3.GetObject': 5,
      's3.HeadObject': 6,
      's3.GetObjectTagging': 1,
    });
    expect(units.s3PutCopyPostListRequests).toBe(13);
    expect(units.s3GetAndOtherRequests).toBe(12);
  });

  it('bills DELETE and CANCEL (abort) requests nothing, and still counts them as requests', () => {
    const counter = counted({ 's3.DeleteObject': 4, 's3.DeleteObjects': 1, 's3.AbortMultipartUpload': 1 });
    const units = billedUnits(counter, 0, 0, 0);
    expect(units.s3PutCopyPostListRequests).toBe(0);
    expect(units.s3GetAndOtherRequests).toBe(0);
    expect(units.s3FreeRequests).toBe(6);
    expect(requestsPerFile(units, 2).s3).toBe(3);
  });
});

describe('usdPerMillionFiles', () => {
  it('prices one LIST per file as one PUT per file', () => {
    const list = s3Units({ 's3.ListObjectsV2': 1_000 });
    const put = s3Units({ 's3.PutObject': 1_000 });
    expect(usdPerMillionFiles(list, 1_000)).toBe(usdPerMillionFiles(put, 1_000));
    // $0.005 per 1,000 requests: $5 per million files at one request per file.
    expect(usdPerMillionFiles(list, 1_000)).toBe(PRICES.s3PerThousandPutCopyPostList * 1_000);
  });

  it('prices a GET per file at the GET rate and a DELETE at nothing', () => {
    expect(usdPerMillionFiles(s3Units({ 's3.GetObject': 1_000 }), 1_000)).toBe(0.4);
    expect(usdPerMillionFiles(s3Units({ 's3.DeleteObject': 1_000 }), 1_000)).toBe(0);
  });
});

describe('provisionedUsdPerMillionFiles: the ledger on provisioned capacity at a steady rate', () => {
  const units = {
    ...s3Units({}),
    sqsRequests: 1_200,
    dynamodbWriteUnits: 1_000,
    dynamodbReadUnits: 0,
  };

  it('pays write units as capacity-hours at the target utilization, and the floors by the hour', () => {
    const rate = { filesPerSecond: 100, targetUtilization: 0.5, floorWcu: 0, floorRcu: 0 };
    const priced = provisionedUsdPerMillionFiles(units, 1_000, rate);
    // One write unit a file, 100 files a second at 50%: 200 WCU, $0.13 an hour, for 360,000 files.
    expect(priced.provisionedWcu).toBe(200);
    expect(priced.ledgerUsdPerMillionFiles).toBeCloseTo((200 * PRICES.dynamodbPerWcuHour * 1e6) / 360_000, 3);
    // SQS as on demand: 1.2 requests a file at $0.40 per million.
    expect(priced.usdPerMillionFiles).toBe(Math.round((0.48 + priced.ledgerUsdPerMillionFiles) * 100) / 100);
    // Minimum capacity costs the same every hour, whatever the rate: less per file the more files.
    const floored = { ...rate, floorWcu: 10 };
    const slow = provisionedUsdPerMillionFiles(units, 1_000, { ...floored, filesPerSecond: 1 });
    const fast = provisionedUsdPerMillionFiles(units, 1_000, floored);
    expect(slow.ledgerUsdPerMillionFiles).toBeGreaterThan(fast.ledgerUsdPerMillionFiles);
  });

  it('is below on-demand at a steady rate with the infra defaults', () => {
    const onDemand = usdPerMillionFiles(units, 1_000);
    expect(provisionedUsdPerMillionFiles(units, 1_000, STEADY_RATE).usdPerMillionFiles).toBeLessThan(
      onDemand,
    );
  });
});

import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3ObjectLister } from '../../../shared/backfill/aws/s3-lister.ts';
import { backfillRecord } from '../../../shared/backfill/aws/sqs-enqueuer.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { parseMessage } from '../../../shared/ingestion/parse-message.ts';
import { fileIdentity } from '../../../shared/ingestion/routing.ts';
import { normalizeVersionId } from '../../../shared/ingestion/version-id.ts';
import { eventBridgeObjectCreated, s3Notification, snsWrapped } from '../../support/events.ts';

const overwrites = { allowOverwrites: true };
const only = (body: string): ObjectRef => {
  const parsed = parseMessage(body);
  expect(parsed.malformed).toEqual([]);
  expect(parsed.objects).toHaveLength(1);
  return parsed.objects[0] as ObjectRef;
};

/** A lister over a fake S3 client that answers ListObjectVersions with the given versions. */
function listerAnswering(versions: Array<{ Key: string; VersionId?: string }>): S3ObjectLister {
  const client = {
    send: async () => ({
      Versions: versions.map((v) => ({ ...v, IsLatest: true, Size: 100, ETag: '"etag-1"' })),
      IsTruncated: false,
    }),
  } as unknown as S3Client;
  return new S3ObjectLister(client);
}

describe('versionId normalisation: one identity per object, whatever brought it', () => {
  it('turns the "null" of a versioning-suspended bucket, empty and missing into null; keeps real ids', () => {
    expect(normalizeVersionId('null')).toBeNull();
    expect(normalizeVersionId('')).toBeNull();
    expect(normalizeVersionId(undefined)).toBeNull();
    expect(normalizeVersionId(null)).toBeNull();
    expect(normalizeVersionId('3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrH')).toBe('3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrH');
  });

  it.each([
    ['an S3 notification', s3Notification({ key: 'orders/a.json', versionId: 'null' })],
    [
      'an S3 notification in an SNS envelope',
      snsWrapped(s3Notification({ key: 'orders/a.json', versionId: 'null' })),
    ],
    [
      'an EventBridge Object Created event',
      eventBridgeObjectCreated({ key: 'orders/a.json', versionId: 'null' }),
    ],
  ])('%s from a suspended bucket has no versionId', (_shape, body) => {
    expect(only(body).versionId).toBeNull();
  });

  it.each([
    ['an S3 notification', s3Notification({ key: 'orders/a.json', versionId: 'v-123' })],
    [
      'an S3 notification in an SNS envelope',
      snsWrapped(s3Notification({ key: 'orders/a.json', versionId: 'v-123' })),
    ],
    [
      'an EventBridge Object Created event',
      eventBridgeObjectCreated({ key: 'orders/a.json', versionId: 'v-123' }),
    ],
  ])('%s from a versioned bucket keeps its versionId', (_shape, body) => {
    expect(only(body).versionId).toBe('v-123');
  });

  it('a live event and the backfill lister give a suspended-bucket object the same allowOverwrites identity', async () => {
    const live = only(s3Notification({ key: 'orders/a.json', versionId: 'null', eTag: 'etag-1' }));
    const page = await listerAnswering([{ Key: 'orders/a.json', VersionId: 'null' }]).list({
      bucket: 'landing',
      prefix: 'orders/',
      limit: 1000,
      versions: true,
    });
    const listed = page.objects[0];
    expect(listed?.versionId).toBeNull();
    const fromListing: ObjectRef = {
      bucket: 'landing',
      key: 'orders/a.json',
      size: listed?.size ?? 0,
      eTag: listed?.eTag ?? null,
      versionId: listed?.versionId ?? null,
      sequencer: null,
      eventTime: live.eventTime,
    };
    expect(fileIdentity(overwrites, fromListing)).toBe(fileIdentity(overwrites, live));
    // And the record the backfill enqueues parses back to that identity.
    const enqueued = only(
      JSON.stringify({ Records: [backfillRecord(fromListing, { table: 'orders', run: 'r' })] }),
    );
    expect(fileIdentity(overwrites, enqueued)).toBe(fileIdentity(overwrites, live));
  });

  it('a versioned object has the same identity from its event, EventBridge and the lister', async () => {
    const fromNotification = only(s3Notification({ key: 'orders/a.json', versionId: 'v-9' }));
    const fromEventBridge = only(eventBridgeObjectCreated({ key: 'orders/a.json', versionId: 'v-9' }));
    const page = await listerAnswering([{ Key: 'orders/a.json', VersionId: 'v-9' }]).list({
      bucket: 'landing',
      prefix: 'orders/',
      limit: 1000,
      versions: true,
    });
    expect(page.objects[0]?.versionId).toBe('v-9');
    expect(fileIdentity(overwrites, fromEventBridge)).toBe(fileIdentity(overwrites, fromNotification));
  });
});

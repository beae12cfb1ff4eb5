import * as z from '../kernel/zod.ts';
import { issueLines } from '../kernel/zod.ts';
import type { ObjectRef } from './model.ts';
import { decodeNotificationKey } from './notification-key.ts';
import { normalizeVersionId } from './version-id.ts';

/** What one SQS message body holds. */
export interface ParsedMessage {
  /** Object-created events, keys decoded. */
  readonly objects: readonly ObjectRef[];
  /** Records we deliberately do not ingest (test events, removals...), with why: logged, not quarantined. */
  readonly ignored: readonly string[];
  /** Records that could not be understood: quarantined with the reason, the rest of the message goes on. */
  readonly malformed: ReadonlyArray<{
    readonly index: number;
    readonly reason: string;
    readonly record: unknown;
  }>;
}

const nonEmpty = z.string().check(z.minLength(1));
const size = z.int().check(z.nonnegative());

/** S3 event notification record, eventVersion 2.x (notification-content-structure). */
const notificationRecord = z.object({
  eventSource: z.literal('aws:s3'),
  eventVersion: z.string().check(z.regex(/^2\./, 'eventVersion must be 2.x')),
  eventName: nonEmpty,
  eventTime: nonEmpty,
  s3: z.object({
    bucket: z.object({ name: nonEmpty }),
    object: z.object({
      key: nonEmpty,
      size: z.optional(size),
      eTag: z.optional(z.string()),
      versionId: z.nullish(z.string()),
      sequencer: z.optional(z.string()),
    }),
  }),
  /** Inlet's own addition on records a backfill enqueued (shared/backfill/aws/sqs-enqueuer.ts). */
  inlet: z.optional(z.object({ table: nonEmpty, run: z.optional(z.string()) })),
});

/**
 * EventBridge "Object Created" from S3, delivered to SQS as the bare event. Its key is NOT URL-encoded,
 * unlike notifications: a real captured event (gist.github.com/vincentclaes/7a5eb53acc05b316c86769fed25d4e1a,
 * eu-west-1, 2023) carries "raw/health-check/2023-08-08T14:03:40.532432.zip" with literal ':', which the
 * notification format sends as %3A (aws/aws-sdk-js#837); the AmazonS3 user guide page "EventBridge event
 * message structure" documents no encoding, and moto sends the raw key too. So it is used as is.
 */
const eventBridgeEvent = z.object({
  'detail-type': nonEmpty,
  source: z.literal('aws.s3'),
  time: z.union([nonEmpty, z.number()]),
  detail: z.object({
    bucket: z.object({ name: nonEmpty }),
    object: z.object({
      key: nonEmpty,
      size: z.optional(size),
      etag: z.optional(z.string()),
      eTag: z.optional(z.string()), // moto's spelling
      'version-id': z.nullish(z.string()),
      sequencer: z.optional(z.string()),
    }),
  }),
});

const snsEnvelope = z.object({
  Type: z.literal('Notification'),
  Message: z.string(),
  TopicArn: z.optional(z.string()),
});

function issueText(error: Parameters<typeof issueLines>[0]): string {
  return issueLines(error).slice(0, 3).join('; ');
}

function isoTime(value: string | number): string {
  const date = typeof value === 'number' ? new Date(value < 1e12 ? value * 1000 : value) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}

/** S3 sends eTags quoted in listings and some events; the ledger and manifests keep them bare. */
export function stripQuotes(eTag: string | undefined): string | null {
  return eTag ? eTag.replace(/"/g, '') : null;
}

type RecordOutcome = { object: ObjectRef } | { ignored: string } | { malformed: string };

function parseNotificationRecord(record: unknown): RecordOutcome {
  const parsed = notificationRecord.safeParse(record);
  if (!parsed.success) return { malformed: `not an S3 event record: ${issueText(parsed.error)}` };
  const { eventName, eventTime, s3, inlet } = parsed.data;
  if (!eventName.startsWith('ObjectCreated:'))
    return { ignored: `${eventName} is not an object-created event` };
  if (s3.object.size === undefined) return { malformed: 'ObjectCreated record without s3.object.size' };
  let key: string;
  try {
    key = decodeNotificationKey(s3.object.key);
  } catch {
    return { malformed: `object key is not valid URL encoding: ${s3.object.key.slice(0, 200)}` };
  }
  return {
    object: {
      bucket: s3.bucket.name,
      key,
      size: s3.object.size,
      eTag: stripQuotes(s3.object.eTag),
      versionId: normalizeVersionId(s3.object.versionId),
      sequencer: s3.object.sequencer ?? null,
      eventTime: isoTime(eventTime),
      ...(inlet ? { target: inlet.table } : {}),
    },
  };
}

function parseEventBridge(event: unknown): RecordOutcome {
  const parsed = eventBridgeEvent.safeParse(event);
  if (!parsed.success) return { malformed: `not an S3 EventBridge event: ${issueText(parsed.error)}` };
  const { detail, time } = parsed.data;
  if (parsed.data['detail-type'] !== 'Object Created') {
    return { ignored: `EventBridge '${parsed.data['detail-type']}' is not an object-created event` };
  }
  if (detail.object.size === undefined)
    return { malformed: 'Object Created event without detail.object.size' };
  return {
    object: {
      bucket: detail.bucket.name,
      key: detail.object.key,
      size: detail.object.size,
      eTag: stripQuotes(detail.object.etag ?? detail.object.eTag),
      versionId: normalizeVersionId(detail.object['version-id']),
      sequencer: detail.object.sequencer ?? null,
      eventTime: isoTime(time),
    },
  };
}

function collect(outcomes: readonly RecordOutcome[], records: readonly unknown[]): ParsedMessage {
  const objects: ObjectRef[] = [];
  const ignored: string[] = [];
  const malformed: Array<{ index: number; reason: string; record: unknown }> = [];
  outcomes.forEach((outcome, index) => {
    if ('object' in outcome) objects.push(outcome.object);
    else if ('ignored' in outcome) ignored.push(outcome.ignored);
    else malformed.push({ index, reason: outcome.malformed, record: records[index] });
  });
  return { objects, ignored, malformed };
}

function parseValue(value: unknown, depth: number): ParsedMessage {
  const whole = (reason: string): ParsedMessage => ({
    objects: [],
    ignored: [],
    malformed: [{ index: -1, reason, record: value }],
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return whole('message body is not a JSON object');
  }
  const body = value as Record<string, unknown>;
  if (body.Event === 's3:TestEvent') return { objects: [], ignored: ['s3:TestEvent'], malformed: [] };
  if ('Records' in body) {
    if (!Array.isArray(body.Records)) return whole('Records is not an array');
    if (body.Records.length === 0) return whole('Records is empty');
    const records = body.Records as unknown[];
    return collect(records.map(parseNotificationRecord), records);
  }
  if (body.Type === 'Notification') {
    const envelope = snsEnvelope.safeParse(body);
    if (!envelope.success)
      return whole(`SNS envelope without a string Message: ${issueText(envelope.error)}`);
    if (depth > 0) return whole('nested SNS envelopes');
    let inner: unknown;
    try {
      inner = JSON.parse(envelope.data.Message);
    } catch {
      return whole('SNS Message is not JSON');
    }
    return parseValue(inner, depth + 1);
  }
  if (body.source === 'aws.s3' && 'detail-type' in body) return collect([parseEventBridge(body)], [body]);
  return whole('not an S3 notification, SNS envelope or EventBridge S3 event');
}

/**
 * Parses one SQS message body: S3 notification records (eventVersion 2.x), the same inside an SNS envelope
 * (S3 -> SNS -> SQS fan-out), or an EventBridge S3 event. Never throws: bad input comes back as `malformed`.
 */
export function parseMessage(body: string): ParsedMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return {
      objects: [],
      ignored: [],
      malformed: [{ index: -1, reason: 'message body is not JSON', record: body }],
    };
  }
  return parseValue(value, 0);
}

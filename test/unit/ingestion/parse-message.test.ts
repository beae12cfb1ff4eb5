import { describe, expect, it } from 'vitest';
import { decodeNotificationKey } from '../../../shared/ingestion/notification-key.ts';
import { parseMessage } from '../../../shared/ingestion/parse-message.ts';
import {
  AWKWARD_KEYS,
  eventBridgeObjectCreated,
  s3Notification,
  s3Record,
  s3TestEvent,
  snsWrapped,
} from '../../support/events.ts';

describe('decodeNotificationKey', () => {
  it('turns + into a space before percent-decoding, so a literal plus survives', () => {
    expect(decodeNotificationKey('a+b%2Bc.json')).toBe('a b+c.json');
  });

  it('decodes both AWS (/ kept) and moto (/ as %2F) shapes to the same key', () => {
    expect(decodeNotificationKey('dir/a+b.json')).toBe('dir/a b.json');
    expect(decodeNotificationKey('dir%2Fa+b.json')).toBe('dir/a b.json');
  });

  it.each(AWKWARD_KEYS)('round-trips %s through the AWS encoding', (key) => {
    const [record] = JSON.parse(s3Notification({ key })).Records;
    expect(decodeNotificationKey(record.s3.object.key)).toBe(key);
  });
});

describe('parseMessage', () => {
  it('reads every record of an S3 notification with decoded keys and metadata', () => {
    const parsed = parseMessage(
      s3Notification(
        { key: 'orders/a b.json', size: 7, eTag: '"abc"', versionId: 'v1', sequencer: '00AB' },
        { key: 'orders/c+d.json' },
      ),
    );
    expect(parsed.malformed).toEqual([]);
    expect(parsed.objects).toEqual([
      {
        bucket: 'landing',
        key: 'orders/a b.json',
        size: 7,
        eTag: 'abc',
        versionId: 'v1',
        sequencer: '00AB',
        eventTime: '2026-11-29T12:00:00.000Z',
      },
      expect.objectContaining({ key: 'orders/c+d.json' }),
    ]);
  });

  it('accepts moto records without sequencer or versionId', () => {
    const record = s3Record({ key: 'a.json' });
    const { sequencer: _s, ...object } = record.s3.object;
    const parsed = parseMessage(JSON.stringify({ Records: [{ ...record, s3: { ...record.s3, object } }] }));
    expect(parsed.objects[0]).toMatchObject({ key: 'a.json', sequencer: null, versionId: null });
  });

  it('unwraps an SNS envelope (S3 -> SNS -> SQS fan-out)', () => {
    const parsed = parseMessage(snsWrapped(s3Notification({ key: 'orders/x y.json' })));
    expect(parsed.objects.map((o) => o.key)).toEqual(['orders/x y.json']);
  });

  it('takes EventBridge keys as they are: they are not URL-encoded', () => {
    const parsed = parseMessage(eventBridgeObjectCreated({ key: 'orders/a+b c%20.json', versionId: 'v9' }));
    expect(parsed.objects).toEqual([
      expect.objectContaining({
        key: 'orders/a+b c%20.json',
        versionId: 'v9',
        eventTime: '2026-11-29T12:00:00.000Z',
      }),
    ]);
  });

  it('ignores s3:TestEvent, removals and other EventBridge detail types with a reason', () => {
    expect(parseMessage(s3TestEvent)).toEqual({ objects: [], ignored: ['s3:TestEvent'], malformed: [] });
    expect(parseMessage(s3Notification({ key: 'a', eventName: 'ObjectRemoved:Delete' })).ignored).toEqual([
      'ObjectRemoved:Delete is not an object-created event',
    ]);
    expect(parseMessage(eventBridgeObjectCreated({ key: 'a' }, 'Object Deleted')).ignored).toHaveLength(1);
  });

  it.each([
    ['not JSON', '{oops', 'message body is not JSON'],
    ['a JSON array', '[1,2]', 'message body is not a JSON object'],
    ['an unknown shape', '{"hello":"world"}', 'not an S3 notification, SNS envelope or EventBridge S3 event'],
    ['empty Records', '{"Records":[]}', 'Records is empty'],
    [
      'an SNS envelope around non-JSON',
      JSON.stringify({ Type: 'Notification', Message: 'hi' }),
      'SNS Message is not JSON',
    ],
  ])('quarantines %s with a reason', (_name, body, reason) => {
    const parsed = parseMessage(body);
    expect(parsed.objects).toEqual([]);
    expect(parsed.malformed).toEqual([{ index: -1, reason, record: expect.anything() }]);
  });

  it('quarantines only the bad record of a message and keeps the good ones', () => {
    const good = s3Record({ key: 'orders/good.json' });
    const bad = { ...s3Record({ key: 'x' }), eventVersion: '1.0' };
    const noSize = s3Record({ key: 'orders/nosize.json' });
    delete (noSize.s3.object as { size?: number }).size;
    const parsed = parseMessage(JSON.stringify({ Records: [good, bad, noSize] }));
    expect(parsed.objects.map((o) => o.key)).toEqual(['orders/good.json']);
    expect(parsed.malformed.map((m) => [m.index, m.reason])).toEqual([
      [1, 'not an S3 event record: eventVersion: eventVersion must be 2.x'],
      [2, 'ObjectCreated record without s3.object.size'],
    ]);
  });

  it('quarantines a key that is not valid percent-encoding', () => {
    const record = s3Record({ key: 'a' });
    record.s3.object.key = 'bad%E0%A4%A.json';
    expect(parseMessage(JSON.stringify({ Records: [record] })).malformed[0]?.reason).toMatch(
      /not valid URL encoding/,
    );
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { testClients } from '../support/aws.ts';
import {
  AWKWARD_KEYS,
  eventBridgeObjectCreated,
  s3Notification,
  s3TestEvent,
  snsWrapped,
} from '../support/events.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';

const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

function harness(config: Parameters<typeof PipelineHarness.create>[1]) {
  const clients = testClients();
  clientSets.push(clients);
  return PipelineHarness.create(clients, config);
}

const ORDERS = { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds: 2 };

describe('ingestion through S3 notifications', () => {
  it('commits every uploaded file once, awkward keys decoded, in contiguous versions', async () => {
    const h = await harness({ config: ORDERS });
    for (const key of AWKWARD_KEYS) await h.put(key);
    await h.runUntilQuiet();

    const verdict = await h.verify(AWKWARD_KEYS.map((key) => ({ table: 'orders', key })));
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    const [first] = await h.manifests('orders');
    expect(first?.entries[0]?.url).toMatch(/^s3:\/\/.+-landing\/orders\//);
    expect(h.published.map((e) => e.version)).toEqual(verdict.versions.orders);
  });

  it('drops duplicate S3 events and SQS redeliveries, within a batch and across batches', async () => {
    const h = await harness({ config: ORDERS });
    await h.put('orders/a.json');
    await h.put('orders/b.json');
    // The same event twice in the same poll, and once more after a commit.
    const dup = s3Notification({ bucket: h.resources.landingBucket, key: 'orders/a.json' });
    await h.sendEvent(dup);
    await h.sendEvent(dup);
    await h.runUntilQuiet();
    await h.sendEvent(dup);
    await h.sendEvent(
      snsWrapped(s3Notification({ bucket: h.resources.landingBucket, key: 'orders/b.json' })),
    );
    await h.runUntilQuiet();

    const verdict = await h.verify([
      { table: 'orders', key: 'orders/a.json' },
      { table: 'orders', key: 'orders/b.json' },
    ]);
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT });
    expect(h.metrics.totals.get('DuplicatesDropped')).toBeGreaterThanOrEqual(3);
  });

  it('routes one file to two tables, claimed once per table', async () => {
    const h = await harness({
      config: {
        tables: [
          { name: 'orders', prefix: 'orders/' },
          { name: 'json_all', prefix: '', suffix: '.json' },
        ],
        leaseSeconds: 2,
      },
    });
    await h.put('orders/x.json');
    await h.put('orders/y.csv');
    await h.runUntilQuiet();
    const verdict = await h.verify([
      { table: 'orders', key: 'orders/x.json' },
      { table: 'orders', key: 'orders/y.csv' },
      { table: 'json_all', key: 'orders/x.json' },
    ]);
    expect(verdict).toMatchObject(CLEAN_VERDICT);
  });

  it('with allowOverwrites a rewrite is a new file; without it, it is a duplicate', async () => {
    const h = await harness({
      config: {
        tables: [
          { name: 'snapshots', prefix: 'snap/', allowOverwrites: true },
          { name: 'paths', prefix: 'snap/' },
        ],
        leaseSeconds: 2,
      },
    });
    const bucket = h.resources.landingBucket;
    await h.sendEvent(s3Notification({ bucket, key: 'snap/s.json', eTag: 'e1' }));
    await h.sendEvent(s3Notification({ bucket, key: 'snap/s.json', eTag: 'e2' }));
    await h.sendEvent(s3Notification({ bucket, key: 'snap/s.json', eTag: 'e2' }));
    await h.sendEvent(eventBridgeObjectCreated({ bucket, key: 'snap/s.json', eTag: 'e3', versionId: 'v3' }));
    await h.runUntilQuiet();
    const verdict = await h.verify([
      { table: 'snapshots', key: 'snap/s.json', version: 'e1' },
      { table: 'snapshots', key: 'snap/s.json', version: 'e2' },
      { table: 'snapshots', key: 'snap/s.json', version: 'v3' },
      { table: 'paths', key: 'snap/s.json' },
    ]);
    expect(verdict).toMatchObject(CLEAN_VERDICT);
  });

  it('removes TestEvents, quarantines malformed messages with a reason, and the rest of the batch goes on', async () => {
    const h = await harness({ config: ORDERS });
    const bucket = h.resources.landingBucket;
    await h.sendEvent(s3TestEvent);
    await h.sendEvent('this is not json');
    await h.sendEvent(JSON.stringify({ Records: [{ eventSource: 'aws:s3', eventVersion: '1.0' }] }));
    await h.sendEvent(s3Notification({ bucket, key: 'orders/ok.json' }));
    await h.sendEvent(s3Notification({ bucket, key: 'orders/gone.json', eventName: 'ObjectRemoved:Delete' }));
    await h.sendEvent(
      s3Notification({ bucket, key: 'orders/_temporary/0/part.json' }, { bucket, key: 'orders/dir/' }),
    );
    await h.runUntilQuiet();

    const verdict = await h.verify([{ table: 'orders', key: 'orders/ok.json' }]);
    expect(verdict).toMatchObject({ ...CLEAN_VERDICT, dlqDepth: 0 });
    const today = new Date().toISOString().slice(0, 10);
    const quarantined = await h.ledger.listQuarantine([today]);
    expect(quarantined.map((q) => q.reason).sort()).toEqual([
      'message body is not JSON',
      expect.stringMatching(/^not an S3 event record: /),
    ]);
    expect(quarantined.find((q) => q.reason === 'message body is not JSON')?.body).toBe('this is not json');
    // Our TestEvent, the removal, and the TestEvent S3 itself sends when the notification is configured.
    expect(h.metrics.totals.get('EventsIgnored')).toBe(3);
    expect(h.metrics.totals.get('FilesSkipped')).toBe(2);
  });
});

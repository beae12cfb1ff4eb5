// The IAM check itself: a grant cut from the template turns the request that needs it into AccessDenied,
// answered as S3 answers it, and recorded with the action, resource and role (docs/security.md).
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import type { CfnTemplate } from '../../local/synth.ts';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3LandingCleaner } from '../../shared/bronze/aws/s3-landing-cleaner.ts';
import { S3SourceObjects } from '../../shared/bronze/aws/s3-source-objects.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { PipelineHarness } from '../support/harness.ts';
import { iamCheck } from '../support/iam.ts';

const clients = testClients();
afterAll(() => destroyClients(clients));
const target = testTarget();

/** The sink's `s3:ListBucket` on the manifest bucket, cut from its policy (whatever else the statement lists). */
function withoutSinkListOfManifests(template: CfnTemplate): CfnTemplate {
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy' || !id.startsWith('InletBronzeSinkServiceRoleDefaultPolicy'))
      continue;
    const document = resource.Properties?.PolicyDocument as { Statement: Array<Record<string, unknown>> };
    document.Statement = document.Statement.flatMap((s) => {
      if ([s.Action].flat().join() !== 's3:ListBucket') return [s];
      const kept = [s.Resource].flat().filter((r) => !JSON.stringify(r).includes('InletStateManifests'));
      return kept.length > 0 ? [{ ...s, Resource: kept }] : [];
    });
  }
  return template;
}

/** A bronze table whose Delta table lives in another bucket (`location`), one committed version, its sink. */
async function sinkWithCustomLocation(editTemplate?: (template: CfnTemplate) => CfnTemplate) {
  const lake = uniqueName('lake');
  await clients.s3.send(new CreateBucketCommand({ Bucket: lake }));
  const config = {
    tables: [
      {
        name: 'events',
        prefix: 'events/',
        bronze: { format: 'jsonl' as const, location: `s3://${lake}/events` },
      },
    ],
  };
  const h = await PipelineHarness.create(clients, {
    config,
    countRequests: false,
    ...(editTemplate ? { editTemplate } : {}),
  });
  await h.put('events/a.jsonl', '{"n":1}\n');
  await h.runUntilQuiet();
  const sink = h.clientsOf('Sink');
  const cursors = new DynamoDbSinkCursorStore({ client: sink.dynamodb, tableName: h.resources.ledgerTable });
  const table = new SinkTable({
    config: h.config,
    cleaner: new S3LandingCleaner(sink.s3),
    store: new S3BatchStore({ client: sink.s3, bucket: h.resources.manifestBucket }),
    sources: new S3SourceObjects(sink.s3),
    deltaAt: (bucket, prefix) => new S3DeltaStore(sink.s3, bucket, prefix),
    cursors,
    heads: cursors,
    manifestBucket: h.resources.manifestBucket,
    log: silentLog,
    now: Date.now,
  });
  return { h, table, sink };
}

describe.skipIf(target.kind !== 'emulator')('the IAM check', () => {
  it('F6 fixture: without ListBucket on the manifest bucket, the sink reading the next (missing) manifest gets 403 AccessDenied, not 404', async () => {
    const check = iamCheck();
    const before = (await check?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0;
    const { h, table, sink } = await sinkWithCustomLocation(withoutSinkListOfManifests);

    // Version 1 is written; reading manifest 2, which does not exist yet, is refused, so the run fails.
    await expect(table.catchUp('events', Number.POSITIVE_INFINITY)).rejects.toThrow(/AccessDenied/);
    // As S3 answers it: 403 AccessDenied for a key that is missing, to a caller that may not list.
    const missing = await sink.s3
      .send(new GetObjectCommand({ Bucket: h.resources.manifestBucket, Key: 'events/_manifests/9.json' }))
      .catch((error: Error & { $metadata?: { httpStatusCode?: number } }) => error);
    expect(missing).toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    const { denials } = (await check?.denials(before, { expected: true })) ?? { denials: [] };
    expect(denials[0]).toMatchObject({
      caller: 'Sink',
      role: 'InletBronzeSinkServiceRole',
      action: 's3:ListBucket',
      resource: `arn:aws:s3:::${h.resources.manifestBucket}`,
      operation: 's3:GetObject',
      reason: expect.stringContaining('404 only to a caller allowed s3:ListBucket'),
    });
  });

  it('answers a function what it may do as the emulator would, and what it may not as AWS would', async () => {
    const { h } = await sinkWithCustomLocation();
    const sink = h.clientsOf('Sink');
    // Allowed: forwarded, moto's own answer (a missing manifest is 404 to a caller that may list).
    const missing = await sink.s3
      .send(new GetObjectCommand({ Bucket: h.resources.landingBucket, Key: 'events/none.jsonl' }))
      .catch((error: Error) => error);
    expect(missing).toMatchObject({ name: 'NoSuchKey' });
    // Never granted: the sink writing a landing file is refused before it reaches the emulator.
    const check = iamCheck();
    const before = (await check?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0;
    const write = await sink.s3
      .send(
        new PutObjectCommand({ Bucket: h.resources.landingBucket, Key: 'events/forged.jsonl', Body: 'x' }),
      )
      .catch((error: Error) => error);
    expect(write).toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect((write as Error).message).toContain(
      `is not authorized to perform: s3:PutObject on resource: arn:aws:s3:::${h.resources.landingBucket}/events/forged.jsonl`,
    );
    const found = await check?.denials(before);
    expect(found?.denials.map((d) => `${d.caller} ${d.action}`)).toEqual(['Sink s3:PutObject']);
    // The test made it on purpose: acknowledged, so the suite's check after each test does not fail it.
    await check?.acknowledge(found?.last ?? 0);
  });

  // Without s3:ListBucket on the manifest bucket (every bronze table setting `location`), reading the next
  // manifest, absent until written, is 403 instead of 404 and no catch-up ever ends: the sink may always
  // list that bucket (infra/bronze.ts).
  it('F6, the real stack: the sink catches a custom-location table up with no request AWS would deny', async () => {
    const check = iamCheck();
    const before = (await check?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0;
    const { table } = await sinkWithCustomLocation();
    const outcome = await table.catchUp('events', Number.POSITIVE_INFINITY).catch((error: Error) => error);
    const { denials } = (await check?.denials(before)) ?? { denials: [] };
    await check?.acknowledge((await check?.denials(Number.MAX_SAFE_INTEGER))?.last ?? 0);
    expect(denials).toEqual([]);
    expect(outcome).toMatchObject({ written: [0] });
  });
});

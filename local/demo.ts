import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../shared/aws/clients.ts';
import { parsePipelineConfig } from '../shared/config.ts';
import { OUTPUTS } from '../shared/names.ts';
import { Router } from '../shared/routing.ts';
import type { LocalStack } from './local-stack.ts';

export interface DemoPlan {
  /** Distinct (table, key) files the demo expects committed. */
  readonly files: number;
  /** Uploads of a key already uploaded: each sends a duplicate event. */
  readonly duplicateUploads: number;
  /** Malformed messages sent to the ingest queue: each should be quarantined. */
  readonly badInputs: number;
  /** Uploads that match no table or are skipped (folder markers, temp files). */
  readonly skipped: number;
}

const AWKWARD = ['a b+c.json', '100%.json', 'ünï cødé.json', 'dt=2026-11-29;h=12:00.json', 'plus+only.json'];
const BAD_INPUTS = [
  'this is not JSON',
  JSON.stringify({ hello: 'an unknown message shape' }),
  JSON.stringify({ Records: [{ eventSource: 'aws:s3', eventVersion: '1.0', s3: {} }] }),
];

/** Every key the demo uploads for these tables: files, awkward keys, a folder marker and two temp files each. */
export function demoKeys(tables: readonly { prefix: string }[], perTable: number): string[] {
  const keys: string[] = [];
  for (const table of tables) {
    for (let i = 0; i < perTable; i++)
      keys.push(`${table.prefix}2026/11/29/part-${String(i).padStart(4, '0')}.json`);
    for (const name of AWKWARD) keys.push(`${table.prefix}awkward/${name}`);
    keys.push(
      `${table.prefix}2026/`,
      `${table.prefix}_temporary/0/part-0.json`,
      `${table.prefix}part-9.json.tmp`,
    );
  }
  return keys;
}

/** Uploads demo files for every table (awkward keys, re-uploads, temp files) and sends a few bad messages. */
export async function runDemo(clients: AwsClients, stack: LocalStack, perTable = 20): Promise<DemoPlan> {
  const bucket = stack.outputs[OUTPUTS.landingBucket] ?? '';
  const router = new Router(
    parsePipelineConfig({ tables: JSON.parse(stack.outputs[OUTPUTS.tables] ?? '[]') }),
  );
  const keys = demoKeys(stack.tables, perTable);
  const distinct = new Set<string>();
  let skipped = 0;
  const upload = (key: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `{"demo":"${key}"}\n` }));
  for (const key of keys) {
    await upload(key);
    const routed = router.route({
      bucket,
      key,
      size: 1,
      eTag: null,
      versionId: null,
      sequencer: null,
      eventTime: '',
    });
    if (routed.kind !== 'routed') skipped += 1;
    else for (const file of routed.files) distinct.add(`${file.table}#${file.identity}`);
  }
  // Re-uploading a key sends its event again: the path identity makes it a duplicate.
  const again = keys.filter((k) => k.endsWith('.json') && !k.includes('_temporary')).slice(0, 5);
  for (const key of again) await upload(key);
  const queueUrl = stack.outputs[OUTPUTS.ingestQueueUrl];
  for (const body of BAD_INPUTS)
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  return { files: distinct.size, duplicateUploads: again.length, badInputs: BAD_INPUTS.length, skipped };
}

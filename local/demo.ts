import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import pLimit from 'p-limit';
import { configFromEnv, parsePipelineConfig } from '../shared/config/pipeline-config.ts';
import { Router } from '../shared/ingestion/routing.ts';
import { OUTPUTS } from '../shared/kernel/names.ts';
import type { AwsClients } from './aws/clients.ts';
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

/** The demo's file with schema drift and bad records, for a table with a bronze sink. */
export const driftKey = (prefix: string) => `${prefix}2026/11/30/drift.json`;

/**
 * Every key the demo uploads for these tables: files, awkward keys, a folder marker and two temp files each,
 * and a drift file for each table with a bronze sink (`bronzeFormat`, as in `.inlet/local.json`).
 */
export function demoKeys(
  tables: readonly { prefix: string; bronzeFormat?: string }[],
  perTable: number,
): string[] {
  const keys: string[] = [];
  for (const table of tables) {
    if (table.bronzeFormat) keys.push(driftKey(table.prefix));
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
  const bronze = new Map(
    configFromEnv(stack.environment.Committer).tables.flatMap((t) =>
      t.bronze ? [[t.name, t.bronze.format]] : [],
    ),
  );
  const drift = new Set(stack.tables.filter((t) => bronze.has(t.name)).map((t) => driftKey(t.prefix)));
  const keys = demoKeys(
    stack.tables.map((t) => ({ ...t, bronzeFormat: bronze.get(t.name) })),
    perTable,
  ).filter((key) => !drift.has(key));
  const distinct = new Set<string>();
  let skipped = 0;
  const prefixesOf = (format: string) =>
    stack.tables.filter((t) => bronze.get(t.name) === format).map((t) => t.prefix);
  const csvPrefixes = prefixesOf('csv');
  const jsonPrefixes = [...prefixesOf('json'), ...prefixesOf('jsonl')];
  // A bronze CSV table gets CSV bodies, a bronze JSON table a typed column too (so a later misfit is rescued).
  const bodyOf = (key: string) => {
    if (csvPrefixes.some((p) => key.startsWith(p))) return `id,name\n1,"${key}"\n`;
    if (jsonPrefixes.some((p) => key.startsWith(p)))
      return `${JSON.stringify({ demo: key, n: key.length })}\n`;
    return `{"demo":"${key}"}\n`;
  };
  const upload = (key: string, body = bodyOf(key)) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  // Side by side: one at a time, the uploads were most of a small demo's run.
  const limit = pLimit(8);
  await Promise.all(keys.map((key) => limit(() => upload(key))));
  for (const key of keys) {
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
  // Bronze tables: once the first version is in, a file with a new column, a mistyped value and a bad record.
  for (const table of stack.tables) {
    const format = bronze.get(table.name);
    if (!format) continue;
    await firstVersion(clients, stack.outputs[OUTPUTS.manifestBucket] ?? '', table.name);
    const key = driftKey(table.prefix);
    await upload(
      key,
      format === 'csv'
        ? 'id,name,score\n2,drift,9.5\nnot-a-number,typo,1\n3,short row\n'
        : '{"demo":"drift","n":1,"color":"red"}\n{"demo":"typo","n":"not a number","color":"blue"}\nthis line is not JSON\n',
    );
    distinct.add(`${table.name}#${key}`);
  }
  // Re-uploading a key sends its event again: the path identity makes it a duplicate.
  const again = keys.filter((k) => k.endsWith('.json') && !k.includes('_temporary')).slice(0, 5);
  await Promise.all(again.map((key) => limit(() => upload(key))));
  const queueUrl = stack.outputs[OUTPUTS.ingestQueueUrl];
  for (const body of BAD_INPUTS)
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  return { files: distinct.size, duplicateUploads: again.length, badInputs: BAD_INPUTS.length, skipped };
}

/** Waits (up to a minute) for a table's first manifest, so the demo's drift lands in a later version. */
async function firstVersion(clients: AwsClients, manifestBucket: string, table: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: manifestBucket, Prefix: `${table}/_manifests/`, MaxKeys: 1 }),
    );
    if ((page.KeyCount ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

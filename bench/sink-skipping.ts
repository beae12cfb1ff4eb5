// `sink.filesScanned`: the files a selective query reads with the sink's data skipping stats (docs/bronze.md,
// "Data skipping statistics"), against the same table with only `numRecords` in each `add`, as the sink
// wrote it before. delta-rs (the venv's `deltalake`) counts: `file_uris(file_pruning_predicate=...)`.
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { AwsClients } from '../local/aws/clients.ts';
import { projectRoot } from '../local/paths.ts';
import { DEFAULT_EMULATOR_REGION } from '../shared/kernel/aws/target.ts';
import type { PipelineHarness } from '../test/support/harness.ts';
import { drain, quick, sendEvents, venvJson } from './support.ts';

/** Landing files of one manifest version, each of ids above the one before, as files arriving over time. */
const SKIP_SIZE = quick ? { files: 10, rows: 500 } : { files: 40, rows: 500 };
export const SKIP_TABLE = { name: 'skip', prefix: 'skip/', bronze: { format: 'jsonl' as const } };

interface Scan {
  readonly files: number;
  readonly of: number;
}

function filesScanned(endpoint: string, queries: readonly { uri: string; predicate: string }[]) {
  const script = join(projectRoot, 'bench', 'sink_files_scanned.py');
  const options = {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: DEFAULT_EMULATOR_REGION,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_ALLOW_HTTP: 'true',
  };
  return venvJson<Scan[]>(script, [], { options, queries });
}

/** Lands the table's files as one manifest version; the caller's sink writes each as its own data file. */
export async function landSkipFiles(h: PipelineHarness, observer: AwsClients): Promise<void> {
  const keys = Array.from({ length: SKIP_SIZE.files }, (_, i) => `${SKIP_TABLE.prefix}f${i}.json`);
  for (const [i, Key] of keys.entries()) {
    const lines = Array.from({ length: SKIP_SIZE.rows }, (_, j) => {
      const id = i * SKIP_SIZE.rows + j;
      return JSON.stringify({ id, at: 1_700_000_000_000 + id * 1_000, customer: `c-${id % 97}` });
    });
    await observer.s3.send(
      new PutObjectCommand({ Bucket: h.resources.landingBucket, Key, Body: `${lines.join('\n')}\n` }),
    );
  }
  await sendEvents(observer, h.resources.ingestQueue.url, h.resources.landingBucket, keys);
  await drain(h, observer);
}

/**
 * A copy of the table's log with each `add`'s stats cut to `numRecords` and its path made absolute
 * (PROTOCOL.md "Add File and Remove File": a path may be absolute), so it reads the same data files.
 */
async function withoutStats(observer: AwsClients, bucket: string, prefix: string): Promise<string> {
  const target = `${prefix}_without_stats`;
  const page = await observer.s3.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/_delta_log/` }),
  );
  for (const { Key } of page.Contents ?? []) {
    if (!Key?.endsWith('.json')) continue;
    const object = await observer.s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
    const lines = (await object.Body?.transformToString())?.split('\n').filter((l) => l !== '') ?? [];
    const body = lines.map((line) => {
      const action = JSON.parse(line) as { add?: { path: string; stats?: string } };
      if (!action.add) return line;
      const { numRecords } = JSON.parse(action.add.stats ?? '{}') as { numRecords?: number };
      return JSON.stringify({
        add: {
          ...action.add,
          path: `s3://${bucket}/${prefix}/${action.add.path}`,
          stats: JSON.stringify({ numRecords }),
        },
      });
    });
    await observer.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${target}${Key.slice(prefix.length)}`,
        Body: `${body.join('\n')}\n`,
      }),
    );
  }
  return `s3://${bucket}/${target}`;
}

/** Files scanned for the ids of the last landing file, with the stats and without. */
export async function measureFilesScanned(
  endpoint: string,
  observer: AwsClients,
  location: { readonly bucket: string; readonly prefix: string },
) {
  const predicate = `id >= ${(SKIP_SIZE.files - 1) * SKIP_SIZE.rows}`;
  const bare = await withoutStats(observer, location.bucket, location.prefix);
  const [stats, none] = await filesScanned(endpoint, [
    { uri: `s3://${location.bucket}/${location.prefix}`, predicate },
    { uri: bare, predicate },
  ]);
  if (!stats || !none) throw new Error('sink_files_scanned.py answered too few queries');
  if (stats.of !== SKIP_SIZE.files || none.of !== SKIP_SIZE.files)
    throw new Error(
      `the table has ${stats.of} data files, expected one per landing file (${SKIP_SIZE.files})`,
    );
  return { predicate, withStats: stats.files, withoutStats: none.files, of: stats.of };
}

import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CliError } from '../errors.ts';
import { type CliTarget, requireTable } from '../target.ts';

/** Uploads local files under the table's landing prefix; S3 then sends their events as for any upload. */
export async function put(
  target: CliTarget,
  paths: readonly string[],
  options: { table: string; json: boolean },
): Promise<void> {
  const table = requireTable(target, options.table);
  const uploaded = [];
  for (const path of paths) {
    let body: Buffer;
    try {
      if (!statSync(path).isFile()) throw new Error('not a file');
      body = readFileSync(path);
    } catch (error) {
      throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
    }
    const key = `${table.prefix}${basename(path)}`;
    await target.clients.s3.send(
      new PutObjectCommand({ Bucket: target.landingBucket, Key: key, Body: body }),
    );
    uploaded.push({ path, bucket: target.landingBucket, key, bytes: body.length });
  }
  if (options.json) console.log(JSON.stringify(uploaded, null, 2));
  else
    for (const u of uploaded)
      console.log(`uploaded ${u.path} -> s3://${u.bucket}/${u.key} (${u.bytes} bytes)`);
}

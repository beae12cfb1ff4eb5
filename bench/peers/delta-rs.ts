// `peers.deltaRs`: delta-rs's `write_deltalake` (Python, the venv's `deltalake`) on the bronze sink's own
// landing files against the same emulator, one Delta commit per manifest version as the sink makes: rows and
// landing megabytes per second, and the bytes it wrote, beside the sink's.
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { projectRoot } from '../../local/paths.ts';
import { DEFAULT_EMULATOR_REGION } from '../../shared/kernel/aws/target.ts';
import { uniqueName } from '../../test/support/names.ts';
import { SINK_LANDING, type SinkFixture } from '../sink.ts';
import { type BenchContext, log, prefixSize, venvJson } from '../support.ts';

interface LoadResult {
  readonly rows: number;
  readonly commits: number;
  readonly seconds: number;
  readonly readSeconds: number;
  readonly writeSeconds: number;
  readonly filesCoerced: number;
  readonly valuesNulled: number;
  readonly refusal: string | null;
}

function load(endpoint: string, bucket: string, uri: string, versions: SinkFixture['versions']) {
  const script = join(projectRoot, 'bench', 'peers', 'delta_rs_load.py');
  return venvJson<LoadResult>(script, [endpoint, DEFAULT_EMULATOR_REGION, bucket, uri], versions);
}

export async function deltaRsPeer(ctx: BenchContext) {
  const fixture = ctx.fixtures.get(SINK_LANDING) as SinkFixture | undefined;
  if (!fixture) throw new Error('the delta-rs peer needs the sink benchmark to run first');
  log(`peers: delta-rs write_deltalake on the sink's ${fixture.versions.flat().length} landing files`);
  const bucket = uniqueName('deltars');
  await ctx.observer.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const result = await load(ctx.endpoint, fixture.bucket, `s3://${bucket}/table`, fixture.versions);
  if (result.rows !== fixture.rows) throw new Error(`delta-rs wrote ${result.rows} rows of ${fixture.rows}`);
  const written = await prefixSize(ctx.observer, bucket, 'table/');
  return {
    rows: result.rows,
    commits: result.commits,
    seconds: result.seconds,
    rowsPerSecond: Math.round(result.rows / result.seconds),
    mbPerSecond: Math.round((fixture.landingBytes / 1e6 / result.seconds) * 100) / 100,
    // write_deltalake alone, without fetching and parsing the files.
    writeRowsPerSecond: Math.round(result.rows / result.writeSeconds),
    readSeconds: result.readSeconds,
    writeSeconds: result.writeSeconds,
    bytesWritten: written.bytes,
    objectsWritten: written.objects,
    // pyarrow refused these files (a value of another type in a column); the job nulled such values.
    filesCoerced: result.filesCoerced,
    valuesNulled: result.valuesNulled,
    refusal: result.refusal,
    sink: {
      rowsPerSecond: Math.round(fixture.rows / fixture.seconds),
      mbPerSecond: Math.round((fixture.landingBytes / 1e6 / fixture.seconds) * 100) / 100,
      bytesWritten: fixture.bytesWritten,
    },
  };
}

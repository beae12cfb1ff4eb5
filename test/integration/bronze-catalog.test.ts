// The bronze catalog against the emulator's Glue API, with the sink's own role (the IAM check evaluates each
// Glue call against the template's grant): after the first commit the table is registered as a native Delta
// table whose columns are the Delta schema's (as delta-rs reads it), and a commit that adds a column updates
// it (docs/bronze.md "Catalog").
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GetTableCommand } from '@aws-sdk/client-glue';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../local/aws/clients.ts';
import { venvPython } from '../../local/paths.ts';
import { DynamoDbSinkCursorStore } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { GlueTableCatalog } from '../../shared/bronze/aws/glue-table-catalog.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3SourceObjects } from '../../shared/bronze/aws/s3-source-objects.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { S3BatchStore } from '../../shared/ingestion/aws/s3-batch-store.ts';
import { systemClock } from '../../shared/kernel/clock.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { testClients, testTarget } from '../support/aws.ts';
import { PipelineHarness } from '../support/harness.ts';

const run = promisify(execFile);
const reader = fileURLToPath(new URL('./bronze_read.py', import.meta.url));
const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

/** pyarrow's names of the types these rows have, as the Hive types the entry must list. */
const HIVE_OF_ARROW: Record<string, string> = {
  int64: 'bigint',
  double: 'double',
  bool: 'boolean',
  string: 'string',
  large_string: 'string',
  string_view: 'string',
};

/** The latest version's schema as delta-rs reads it, as `name type` with Hive type names. */
async function deltaRsColumns(uri: string): Promise<string[]> {
  const target = testTarget();
  if (target.kind !== 'emulator') throw new Error('reads the table back from the emulator');
  const { stdout } = await run(venvPython, [reader, uri, target.endpoint, target.region], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = JSON.parse(stdout) as {
    version: number;
    versions: Record<string, { schema: [string, string][] }>;
  };
  const schema = out.versions[String(out.version)]?.schema ?? [];
  return schema.map(([name, type]) => `${name} ${HIVE_OF_ARROW[type] ?? `?${type}`}`);
}

describe('bronze catalog on the emulator', () => {
  it('registers the table after its first commit and updates it with the commit that adds a column', async () => {
    const clients = testClients();
    clientSets.push(clients);
    const config = {
      tables: [{ name: 'click-events', prefix: 'clicks/', bronze: { format: 'jsonl' as const } }],
    };
    const h = await PipelineHarness.create(clients, { config, countRequests: false });
    const sinkClients = h.clientsOf('Sink');
    const database = h.resources.glueDatabase;
    const cursors = new DynamoDbSinkCursorStore({
      client: sinkClients.dynamodb,
      tableName: h.resources.ledgerTable,
    });
    const sink = new SinkTable({
      config: h.config,
      store: new S3BatchStore({ client: sinkClients.s3, bucket: h.resources.manifestBucket }),
      sources: new S3SourceObjects(sinkClients.s3),
      deltaAt: (bucket, prefix) => new S3DeltaStore(sinkClients.s3, bucket, prefix),
      cursors,
      manifestBucket: h.resources.manifestBucket,
      log: silentLog,
      ...systemClock,
      catalog: { tables: new GlueTableCatalog(sinkClients.glue), database },
    });
    const location = `s3://${h.resources.manifestBucket}/click-events/_bronze`;
    const entry = async () =>
      (await clients.glue.send(new GetTableCommand({ DatabaseName: database, Name: 'click_events' }))).Table;
    const columns = async () =>
      (await entry())?.StorageDescriptor?.Columns?.map((c) => `${c.Name} ${c.Type}`);

    await expect(entry()).rejects.toMatchObject({ name: 'EntityNotFoundException' });
    await h.put('clicks/a.json', '{"id":1,"page":"/"}\n{"id":2,"page":"/b"}\n');
    await h.runUntilQuiet();
    await sink.catchUp('click-events', Number.POSITIVE_INFINITY);

    const first = await entry();
    expect(first).toMatchObject({
      Name: 'click_events',
      DatabaseName: database,
      TableType: 'EXTERNAL_TABLE',
      Parameters: {
        EXTERNAL: 'TRUE',
        table_type: 'DELTA',
        'spark.sql.sources.provider': 'delta',
        'inlet.table': 'click-events',
      },
      PartitionKeys: [],
      StorageDescriptor: { Location: location, SerdeInfo: { Parameters: { path: location } } },
    });
    expect(await columns()).toEqual(await deltaRsColumns(location));
    expect(await columns()).toEqual([
      'id bigint',
      'page string',
      '_rescued_data string',
      '_source_file string',
      '_manifest_version bigint',
    ]);

    await h.put('clicks/b.json', '{"id":3,"page":"/c","score":0.5,"mobile":true}\n');
    await h.runUntilQuiet();
    await sink.catchUp('click-events', Number.POSITIVE_INFINITY);
    const evolved = await columns();
    expect(evolved).toEqual(await deltaRsColumns(location));
    expect(evolved).toEqual(expect.arrayContaining(['score double', 'mobile boolean']));
    const cursor = await cursors.get('click-events');
    expect(cursor.catalogued).toBe(cursor.deltaVersion);
  }, 120_000);
});

import { randomUUID } from 'node:crypto';
// The bronze sink (docs/bronze.md): rows and landing megabytes per second it turns into Delta commits. Its
// bundle's size and cold import are in `bundles.sink` (bench/bundles.ts), with the other functions'.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { createClients, destroyClients } from '../local/aws/clients.ts';
import { DynamoDbSinkCursorStore } from '../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { S3DeltaStore } from '../shared/bronze/aws/s3-delta-store.ts';
import { S3SourceObjects } from '../shared/bronze/aws/s3-source-objects.ts';
import { S3TableFiles } from '../shared/bronze/aws/s3-table-files.ts';
import { bronzeLocation } from '../shared/bronze/config.ts';
import { DEFAULT_TARGET_FILE_BYTES, optimizeTable } from '../shared/bronze/optimize.ts';
import { type SinkDeps, SinkTable } from '../shared/bronze/sink.ts';
import { DEFAULT_PART_LIMITS } from '../shared/bronze/write-version.ts';
import { systemClock } from '../shared/kernel/clock.ts';
import { silentLog } from '../shared/kernel/log.ts';
import { PipelineHarness } from '../test/support/harness.ts';
import { landSkipFiles, measureFilesScanned, SKIP_TABLE } from './sink-skipping.ts';
import { type Benchmark, drain, log, prefixSize, quick, seconds, sendEvents } from './support.ts';

/** Landing files of JSON Lines, ~100 bytes a row, a few rows rescued, across two committed versions. */
const SINK_SIZE = quick ? { files: 8, rows: 5_000 } : { files: 20, rows: 25_000 };

/** The sink's landing files and what it made of them, for its peer (bench/peers/delta-rs.ts). */
export interface SinkFixture {
  readonly bucket: string;
  /** The keys of each committed version, in order. */
  readonly versions: readonly (readonly string[])[];
  readonly rows: number;
  readonly landingBytes: number;
  readonly seconds: number;
  readonly bytesWritten: number;
}
export const SINK_LANDING = 'sinkLanding';

export const sink: Benchmark = {
  name: 'sink',
  async run({ target, endpoint, observer, fixtures }) {
    log(`bronze sink: ${SINK_SIZE.files} files of ${SINK_SIZE.rows} rows`);
    const clients = createClients(target);
    try {
      const h = await PipelineHarness.create(clients, {
        config: {
          tables: [{ name: 'lake', prefix: 'lake/', bronze: { format: 'jsonl' } }, SKIP_TABLE],
          leaseSeconds: 300,
        },
        batchSize: 1_000,
        batchingWindowMs: 1_000,
        visibilityTimeout: 300,
        notifications: false,
        countRequests: false,
      });
      let bytes = 0;
      const limit = pLimit(4);
      const keys: string[] = [];
      const versions: string[][] = [];
      // Two rounds: two manifest versions, so the timing covers a commit after a schema is known.
      for (const round of [0, 1]) {
        const batch = Array.from({ length: SINK_SIZE.files / 2 }, (_, i) => `lake/r${round}-${i}.json`);
        await Promise.all(
          batch.map((Key, i) =>
            limit(async () => {
              const body = jsonl(round * 1_000_000 + i * SINK_SIZE.rows, SINK_SIZE.rows);
              bytes += Buffer.byteLength(body);
              await observer.s3.send(
                new PutObjectCommand({ Bucket: h.resources.landingBucket, Key, Body: body }),
              );
            }),
          ),
        );
        keys.push(...batch);
        versions.push(batch);
        await sendEvents(observer, h.resources.ingestQueue.url, h.resources.landingBucket, batch);
        await drain(h, observer);
      }
      const sinkDeps: SinkDeps = {
        config: h.config,
        store: h.store,
        sources: new S3SourceObjects(clients.s3),
        deltaAt: (bucket, prefix) => new S3DeltaStore(clients.s3, bucket, prefix),
        cursors: new DynamoDbSinkCursorStore({
          client: clients.dynamodb,
          tableName: h.resources.ledgerTable,
        }),
        manifestBucket: h.resources.manifestBucket,
        log: silentLog,
        ...systemClock,
      };
      const table = new SinkTable(sinkDeps);
      const started = performance.now();
      const outcome = await table.catchUp('lake', Number.POSITIVE_INFINITY);
      const ms = performance.now() - started;
      const rows = outcome.cursor.rows;
      if (rows !== SINK_SIZE.files * SINK_SIZE.rows)
        throw new Error(`sink wrote ${rows} rows of ${keys.length} files`);
      const location = bronzeLocation('lake', h.config.tables[0]?.bronze ?? {}, h.resources.manifestBucket);
      const written = await prefixSize(observer, location.bucket, `${location.prefix}/`);
      // After the timing: a table of one data file per landing file (one part each), for data skipping.
      await landSkipFiles(h, observer);
      await new SinkTable({ ...sinkDeps, parts: { ...DEFAULT_PART_LIMITS, maxFiles: 1 } }).catchUp(
        SKIP_TABLE.name,
        Number.POSITIVE_INFINITY,
      );
      const skipAt = bronzeLocation(SKIP_TABLE.name, {}, h.resources.manifestBucket);
      const filesScanned = await measureFilesScanned(endpoint, observer, skipAt);
      // Optimize throughput: the timed table's files (one or more a version) rewritten into one.
      const optimizeStarted = performance.now();
      const optimized = await optimizeTable(
        {
          ...systemClock,
          delta: new S3DeltaStore(clients.s3, location.bucket, location.prefix),
          files: new S3TableFiles(clients.s3, location.bucket, location.prefix),
          newId: randomUUID,
        },
        { table: 'lake', targetFileBytes: DEFAULT_TARGET_FILE_BYTES, finishBy: Number.POSITIVE_INFINITY },
      );
      const optimizeMs = performance.now() - optimizeStarted;
      fixtures.set(SINK_LANDING, {
        bucket: h.resources.landingBucket,
        versions,
        rows,
        landingBytes: bytes,
        seconds: seconds(ms),
        bytesWritten: written.bytes,
      } satisfies SinkFixture);
      return {
        sink: {
          files: keys.length,
          rows,
          landingMB: Math.round((bytes / 1e6) * 10) / 10,
          deltaVersions: outcome.written.length,
          seconds: seconds(ms),
          rowsPerSecond: Math.round(rows / (ms / 1000)),
          mbPerSecond: Math.round((bytes / 1e6 / (ms / 1000)) * 100) / 100,
          // The Delta table as it stands: data files and log.
          bytesWritten: written.bytes,
          objectsWritten: written.objects,
          // A query for the last landing file's ids, by delta-rs: files read with the stats, and without.
          filesScanned,
          // Bronze optimize (docs/bronze.md "Optimize and vacuum"): MB of small files read and rewritten a second.
          optimizeMbPerSecond: Math.round((optimized.bytesRead / 1e6 / (optimizeMs / 1000)) * 100) / 100,
          optimizeFilesRemoved: optimized.filesRemoved,
        },
      };
    } finally {
      destroyClients(clients);
    }
  },
};

function jsonl(first: number, rows: number): string {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const id = first + i;
    // One row in 1,000 has an amount that does not fit its column: the rescue path is timed too.
    const amount = id % 1_000 === 0 ? '"n/a"' : String((id % 977) / 10);
    lines.push(
      `{"id":${id},"customer":"c-${id % 5_003}","amount":${amount},"paid":${id % 2 === 0},"note":"order ${id}"}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
